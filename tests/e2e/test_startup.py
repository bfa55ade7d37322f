"""The quick commands import nothing heavy (issues 8 and 27): timings live in
bench/startup.py, but which modules a command loads is exact, so it is checked here: in
process for the short commands, and through the installed command's `-X importtime` for the
chat, whose session loads LangChain in a background thread once the prompt is up."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest

from tests.e2e.conftest import AGENTCLI, Agent
from tests.helpers.pty_spawn import Spawn
from tests.helpers.scripted_server import text, tool_calls
from tests.helpers.terminal import CHOICE, PROMPT

HEAVY = (
    "langchain_core",
    "langsmith",
    "langchain_openai",
    "langgraph",
    "openai",
    "pydantic",
    "httpx",
    "prompt_toolkit",
    "rich.markdown",
    "pygments",
    "typer.rich_utils",
    "acp",  # the ACP SDK: only `agentcli acp` loads it
    "opentelemetry",  # only a run's session, with an OTEL endpoint set (agentcli/telemetry/)
)
# what the chat's session loads in the background, once the prompt is drawn
SESSION_LIBRARIES = ("langchain_core", "langchain_openai", "langgraph", "langsmith", "openai")

MODULES_AFTER = f"""
import sys
from agentcli.cli import main
sys.argv = ["agentcli", *sys.argv[1:]]
try:
    main()
except SystemExit:
    pass
print([m for m in {HEAVY!r} if m in sys.modules], file=sys.stderr)
"""


def heavy_imports(tmp_path: Path, *args: str, config: str = "", **env_more: str) -> str:
    path = tmp_path / "config.toml"
    path.write_text(config)
    env = {
        "AGENTCLI_CONFIG": str(path),
        "HOME": str(tmp_path),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "PATH": "/usr/bin:/bin",
        **env_more,
    }
    result = subprocess.run(
        [sys.executable, "-c", MODULES_AFTER, *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    last = result.stderr.strip().splitlines()[-1]
    assert result.stdout or "agentcli: error: no model server is set up" in result.stderr, (
        result.stderr
    )  # the command did its work (or, with no server set up, stopped at the guide)
    assert last.startswith("["), result.stderr
    return last


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["run", "--help"],
        ["threads", "list"],
        ["threads", "list", "--json"],
        ["tools"],
        ["tools", "--json"],
        ["config", "show"],
        ["--version"],
        ["policy", "check", "shell", '{"command": "ls"}'],
        ["policy", "check", "write_file", '{"path": "a.txt", "content": "x"}'],
        ["doctor"],  # no key and no base URL: no server to probe (the probe uses httpx)
        ["run", "hi"],  # no model server set up: the guide, before anything loads
        ["acp", "--help"],  # the ACP SDK (pydantic) loads inside the command only
        ["acp"],  # no model server set up: the guide, before the SDK or a session loads
        ["chat"],
        ["resume"],
    ],
)
def test_quick_commands_import_nothing_heavy(tmp_path: Path, args: list[str]) -> None:
    assert heavy_imports(tmp_path, *args) == "[]"


def test_a_key_and_a_server_change_nothing_for_the_store_commands(tmp_path: Path) -> None:
    """With a model server set up, commands that only read the index still load nothing."""
    server = {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}
    for args in (["threads", "list"], ["config", "show"], ["--help"], ["tools"]):
        assert heavy_imports(tmp_path, *args, **server) == "[]", args


def test_an_otel_endpoint_changes_nothing_for_the_quick_commands(tmp_path: Path) -> None:
    """OpenTelemetry loads with a session that runs, never for help or the index."""
    otel = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9", "OTEL_SERVICE_NAME": "x"}
    for args in (["--help"], ["run", "--help"], ["threads", "list"], ["config", "show"]):
        assert heavy_imports(tmp_path, *args, **otel) == "[]", args
    assert heavy_imports(tmp_path, "run", "hi", **otel) == "[]"  # the guide: no session


def _python(agent: Agent, *argv: str) -> pexpect.spawn:
    """Python with `argv` on a 40x120 terminal, in the agent's workspace and environment."""
    return Spawn(
        sys.executable,
        list(argv),
        env=agent.env,
        cwd=str(agent.workspace),
        encoding="utf-8",
        timeout=120,
        dimensions=(40, 120),
    )


def imported_before(agent: Agent, pattern: str, *args: str) -> list[str]:
    """The heavy modules the installed command imported before `pattern` showed on its
    terminal (`-X importtime` writes each import to stderr, the same terminal)."""
    child = _python(agent, "-X", "importtime", AGENTCLI, *args)
    try:
        child.expect(pattern)
        shown = child.before or ""
    finally:
        child.close(force=True)
    names = set(re.findall(r"^import time:.*\|\s+([\w.]+)\s*$", shown, re.M))
    assert "agentcli.cli" in names, shown[-2000:]  # the check reads the imports at all
    return sorted({name.split(".")[0] for name in names} & set(SESSION_LIBRARIES))


def test_the_chat_prompt_comes_before_langchain(agent: Agent) -> None:
    """The prompt is drawn by the main thread before the session's libraries load."""
    assert imported_before(agent, PROMPT, "chat") == []


def test_the_terminal_check_sees_heavy_imports(agent: Agent) -> None:
    """The same check, up to the moment the session is needed: LangChain is there."""
    agent.server.push(text("Hello."))
    assert "langchain_core" in imported_before(agent, "Hello.", "chat", "hi")


def test_the_check_sees_heavy_imports(tmp_path: Path) -> None:
    module = tmp_path / "mytools.py"
    module.write_text(
        "from langchain_core.tools import tool\n\n@tool\ndef hi() -> str:\n"
        '    """Say hi."""\n    return "hi"\n'
    )
    imported = heavy_imports(tmp_path, "tools", config=f"[tools]\nmodules = ['{module}']\n")
    assert "'langchain_core'" in imported and "'pydantic'" in imported


# the installed command under an audit hook that says on the terminal when the model
# client's first module starts loading (`import` is audited once per module, at its start)
MODEL_CLIENT = "@@model client loading"
WITH_HOOK = f"""
import os, runpy, sys
said = []
def hook(event, args):
    if event == "import" and args[0].split(".")[0] in ("openai", "langchain_openai"):
        if not said:  # an audit hook cannot be removed: it says it once
            said.append(args[0])
            os.write(2, b"\\r\\n{MODEL_CLIENT}\\r\\n")
sys.addaudithook(hook)
sys.argv = [{AGENTCLI!r}, *sys.argv[1:]]
runpy.run_path({AGENTCLI!r}, run_name="__main__")
"""


def test_resume_loads_the_model_client_once_the_review_is_drawn(agent: Agent) -> None:
    """The OpenAI SDK (the slowest import) starts loading after the pending review's panel
    is on the screen, not while the recap and the panel are drawn (one thread runs at a
    time: it would share their CPU); and it does load while the person reads."""
    agent.server.push(tool_calls(("write_file", {"path": "a.txt", "content": "x\n"})))
    parked = agent.run("run", "write a.txt")
    assert parked.returncode == 3, parked.stderr
    store = agent.store()
    thread = store.recent(1)[0].thread_id
    store.close()
    child = _python(agent, "-c", WITH_HOOK, "resume", thread)
    try:
        child.expect(CHOICE)
        shown = (child.before or "") + str(child.after)
        if MODEL_CLIENT not in shown:  # the hook works: the client loads at the review
            child.expect_exact(MODEL_CLIENT)
    finally:
        child.close(force=True)
    panel_end = shown.rfind("\u2570")  # the panel's bottom-left corner
    assert panel_end > shown.find("write_file") >= 0, shown
    assert MODEL_CLIENT not in shown[:panel_end], shown
