"""Paths: rules match where a path leads; file tools never read or write outside the workspace.

Through the installed command with rules in the user's config file: a deny on `.env` must hold
for every spelling of the path and every file tool, even with --auto-approve; an allow on
`docs/*` must not let a write through a link out of docs run unreviewed. Then the race of
issue 13 item 7: a folder swapped for a link to an outside folder while the tools work.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.e2e.conftest import Agent
from tests.scripted_server import text, tool_calls
from tools.base import ToolError
from tools.context import ToolContext
from tools.files import read_file, write_file
from tools.search import search_files

SECRET = "hunter2-dotenv"
OUTSIDE = "OUTSIDE-SECRET-42"

RULES = """
[[approval.rules]]
tool = "read_file"
match = ".env"
decision = "deny"

[[approval.rules]]
tool = "write_file"
match = "docs/*"
decision = "allow"
"""

# read_file paths that lead to .env (or outside the workspace): none may show the secret,
# even with --auto-approve, where only the deny rule stands in the way.
PAYLOADS_READ = [
    ".env",
    "./.env",
    ".//.env",
    "docs/../.env",
    "docs/up/.env",
    "docs/up/docs/up/.env",
    "docs/./up/./.env",
    "{ws}/.env",
    "{ws}//.env",
    "{ws}/docs/up/.env",
    "{ws}/./docs/../.env",
    "{link}/.env",  # the workspace through a link to it
    "/proc/self/cwd/.env",
    "/proc/self/root{ws}/.env",
    "/dev/fd/../../../{ws}/.env",
    "dotlink",  # dotlink -> .env
    "docs/dotlink2",  # -> ../.env
    "docs/abs-dotlink",  # -> {ws}/.env (absolute target)
    "docs/chain1",  # -> chain2 -> ../dotlink -> .env
    ".env/",
    ".ENV",
    ".Env",
    "sub/.env",  # a nested .env: a bare name covers every depth
    "docs/up/sub/.env",
    "../work/.env",
    "..",
    "../outside.txt",
    "docs/up/../outside.txt",
    "docs/out-link",  # -> outside.txt (outside)
    "docs/out-dir/outside.txt",  # out-dir -> the parent folder
    "docs/hardlink.txt",  # a hard link to the outside file
    "docs/loop",  # loop -> loop
    "docs/loop/x",
    "~/.env",
    ".\u0435nv",  # Cyrillic e
    ".\uff45nv",  # fullwidth e
    ".env\u200b",  # zero-width space
    ".e\u0301nv",  # combining accent
]

# write_file paths an allow rule on docs/* must not let through without review
PAYLOADS_WRITE = [
    "docs/up/.git/hooks/pre-commit",
    "docs/up/evil.txt",
    "docs/up/.env",
    "docs/../evil.txt",
    "docs/up/docs/../evil.txt",
    "{ws}/docs/up/evil.txt",
    "docs/out-dir/evil.txt",
    "docs/out-link",
    "docs/dotlink2",
    "docs/loop",
    "/proc/self/cwd/docs/up/evil.txt",
    "../work/docs/up/evil.txt",
]

# other file tools against the denied .env (with --auto-approve): none may read or change it
PAYLOADS_OTHER_TOOLS: list[tuple[str, dict[str, Any]]] = [
    ("write_file", {"path": ".env", "content": "pwned"}),
    ("write_file", {"path": "docs/up/.env", "content": "pwned"}),
    ("edit_file", {"path": "./.env", "old_text": "SECRET", "new_text": "pwned"}),
    ("edit_file", {"path": "dotlink", "old_text": "SECRET", "new_text": "pwned"}),
    ("search_files", {"pattern": "SECRET"}),
    ("search_files", {"pattern": "SECRET", "path": "docs/up"}),
    ("search_files", {"pattern": "SECRET", "path": ".env"}),
    ("search_files", {"pattern": "SECRET", "path": "dotlink"}),
    ("search_files", {"pattern": "SECRET", "glob": ".env"}),
    ("search_files", {"pattern": "OUTSIDE"}),
    ("list_dir", {"path": "docs/out-dir"}),
]


def write_config(agent: Agent, rules: str = RULES) -> None:
    path = Path(agent.env["XDG_CONFIG_HOME"]) / "agentcli" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(rules)


def build_workspace(ws: Path) -> None:
    """The attacker's layout: links and a hard link, plus ordinary files that must work."""
    (ws / ".env").write_text(f"SECRET={SECRET}\n")
    (ws / "sub").mkdir()
    (ws / "sub" / ".env").write_text(f"SECRET={SECRET}\n")
    (ws / ".git" / "hooks").mkdir(parents=True)
    (ws / "docs").mkdir()
    (ws / "docs" / "guide.md").write_text("the guide\n")
    (ws / "README.md").write_text("read me\n")
    (ws.parent / "outside.txt").write_text(f"{OUTSIDE}\n")
    (ws / "docs" / "up").symlink_to("..")
    (ws / "dotlink").symlink_to(".env")
    (ws / "docs" / "dotlink2").symlink_to("../.env")
    (ws / "docs" / "abs-dotlink").symlink_to(ws / ".env")
    (ws / "docs" / "chain1").symlink_to("chain2")
    (ws / "docs" / "chain2").symlink_to("../dotlink")
    (ws / "docs" / "out-link").symlink_to(ws.parent / "outside.txt")
    (ws / "docs" / "out-dir").symlink_to(ws.parent)
    (ws / "docs" / "loop").symlink_to("loop")
    (ws / "docs" / "readme-link").symlink_to("../README.md")
    os.link(ws.parent / "outside.txt", ws / "docs" / "hardlink.txt")
    (ws.parent / "ws-link").symlink_to(ws)


def spelled(path: str, ws: Path) -> str:
    return path.format(ws=ws, link=ws.parent / "ws-link")


def tool_messages(agent: Agent) -> dict[str, str]:
    results: dict[str, str] = {}
    for request in agent.server.requests:
        for message in request["messages"]:
            if message["role"] == "tool":
                results[message["tool_call_id"]] = message["content"]
    return results


def test_deny_on_dotenv_holds_for_every_spelling(agent: Agent) -> None:
    ws = agent.workspace
    build_workspace(ws)
    write_config(agent)
    calls = [("read_file", {"path": spelled(p, ws)}) for p in PAYLOADS_READ]
    agent.server.push(tool_calls(*calls), text("done"))
    result = agent.run("run", "read the secrets", "-y", "-o", "json")
    assert result.returncode == 0, result.stderr
    results = tool_messages(agent)
    assert len(results) == len(PAYLOADS_READ)
    leaked = {p: r for p, r in zip(PAYLOADS_READ, results.values(), strict=True) if SECRET in r}
    assert leaked == {}
    outside = [p for p, r in zip(PAYLOADS_READ, results.values(), strict=True) if OUTSIDE in r]
    assert outside == []
    assert SECRET not in result.stdout and OUTSIDE not in result.stdout


def test_allow_rule_on_docs_does_not_cover_paths_that_lead_out_of_docs(agent: Agent) -> None:
    ws = agent.workspace
    build_workspace(ws)
    write_config(agent)
    calls = [("write_file", {"path": spelled(p, ws), "content": "pwned"}) for p in PAYLOADS_WRITE]
    agent.server.push(tool_calls(*calls))
    result = agent.run("run", "write them", "-o", "json")
    assert result.returncode == 3, result.stderr  # every one waits for a person
    pending = json.loads(result.stdout)["pending"]
    denied = {"docs/up/.env", "docs/dotlink2"}  # lead to .env: the read_file deny holds
    expected = [spelled(p, ws) for p in PAYLOADS_WRITE if p not in denied]
    assert [p["args"]["path"] for p in pending] == expected
    assert not (ws / ".git" / "hooks" / "pre-commit").exists()
    assert not (ws / "evil.txt").exists() and not (ws.parent / "evil.txt").exists()
    assert (ws / ".env").read_text() == f"SECRET={SECRET}\n"


def test_deny_on_a_path_holds_for_every_file_tool(agent: Agent) -> None:
    ws = agent.workspace
    build_workspace(ws)
    write_config(agent)
    agent.server.push(tool_calls(*PAYLOADS_OTHER_TOOLS), text("done"))
    result = agent.run("run", "go", "-y", "-o", "json")
    assert result.returncode == 0, result.stderr
    results = list(tool_messages(agent).values())
    assert len(results) == len(PAYLOADS_OTHER_TOOLS)
    assert [r for r in results if SECRET in r or OUTSIDE in r] == []
    assert (ws / ".env").read_text() == f"SECRET={SECRET}\n"
    assert (ws.parent / "outside.txt").read_text() == f"{OUTSIDE}\n"
    assert "denied by rule 1" in results[0]  # written for read_file, holds for write_file


def test_legitimate_use_still_works(agent: Agent) -> None:
    ws = agent.workspace
    build_workspace(ws)
    write_config(agent)
    agent.server.push(
        tool_calls(
            ("write_file", {"path": "docs/new.md", "content": "new page\n"}),
            ("write_file", {"path": "docs/deep/er.md", "content": "deeper\n"}),
        ),
        text("done"),
    )
    first = agent.run("run", "write docs", "-o", "json")  # allowed by the docs/* rule
    assert first.returncode == 0, first.stdout + first.stderr
    assert (ws / "docs" / "new.md").read_text() == "new page\n"
    assert (ws / "docs" / "deep" / "er.md").read_text() == "deeper\n"
    agent.server.push(
        tool_calls(
            ("read_file", {"path": "docs/readme-link"}),  # a link inside, to inside
            ("read_file", {"path": f"{ws}/docs/guide.md"}),
            ("edit_file", {"path": "README.md", "old_text": "read", "new_text": "READ"}),
            ("search_files", {"pattern": "guide|page"}),
            ("list_dir", {"path": "docs"}),
        ),
        text("done"),
    )
    second = agent.run("run", "read", "-y", "-o", "json")
    assert second.returncode == 0, second.stderr
    results = list(tool_messages(agent).values())[2:]
    assert "read me" in results[0] and "the guide" in results[1]
    assert (ws / "README.md").read_text() == "READ me\n"
    assert "docs/guide.md:1: the guide" in results[3] and "docs/new.md:1" in results[3]
    assert "readme-link -> ../README.md" in results[4]


# -- the race: a folder swapped for a link to an outside folder, while the tools work ----------


def _runtime(ws: Path) -> Any:
    return SimpleNamespace(context=ToolContext(workspace=ws))


class Swapper:
    """Swaps ``ws/d`` (a real folder) for a link to ``outside`` and back, as fast as it can."""

    def __init__(self, ws: Path, outside: Path) -> None:
        self.ws, self.outside = ws, outside
        self.stop = threading.Event()
        self.swaps = 0
        self.calls = 0
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self) -> None:
        d, real = self.ws / "d", self.ws / "d-real"
        while not self.stop.is_set():
            try:
                os.rename(d, real)
            except OSError:
                continue  # d is a folder write_file just made and filled: try again
            try:
                os.symlink(self.outside, d)
                os.unlink(d)
            except OSError:  # write_file made a new d while it was gone
                pass
            while real.exists():
                if d.is_symlink():
                    d.unlink()
                elif d.exists():
                    shutil.rmtree(d, ignore_errors=True)
                try:
                    os.rename(real, d)
                except OSError:
                    continue
            self.swaps += 1

    def __enter__(self) -> Swapper:
        self.interval = sys.getswitchinterval()
        sys.setswitchinterval(1e-6)  # interleave the two threads as finely as possible
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()
        sys.setswitchinterval(self.interval)


@pytest.fixture
def race(tmp_path: Path) -> tuple[Path, Path]:
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    (ws / "d").mkdir(parents=True)
    outside.mkdir()
    (ws / "d" / "f.txt").write_text("inside\n")
    (outside / "f.txt").write_text(f"{OUTSIDE}\n")
    return ws, outside


ITERATIONS, SWAPS, SECONDS = 3000, 1000, 10.0


def busy(swapper: Swapper, deadline: float) -> bool:
    """Go on until both sides did enough (or the time is up): counts the tool's calls."""
    swapper.calls += 1
    enough = swapper.calls > ITERATIONS and swapper.swaps >= SWAPS
    return not enough and time.monotonic() < deadline


def test_read_file_never_reads_outside_while_a_folder_is_swapped(race: tuple[Path, Path]) -> None:
    ws, _ = race
    runtime, ok, deadline = _runtime(ws), 0, time.monotonic() + SECONDS
    with Swapper(*race) as swapper:
        while busy(swapper, deadline):
            try:
                result = read_file.func(path="d/f.txt", runtime=runtime)  # type: ignore[attr-defined]
                assert OUTSIDE not in result
                ok += "inside" in result
            except ToolError as exc:
                assert OUTSIDE not in str(exc)
    assert swapper.swaps > 10  # the race really ran
    assert ok > 0  # and the file inside was read whenever the folder was there


def test_write_file_never_writes_outside_while_a_folder_is_swapped(
    race: tuple[Path, Path],
) -> None:
    ws, outside = race
    runtime, deadline = _runtime(ws), time.monotonic() + SECONDS
    with Swapper(*race) as swapper:
        while busy(swapper, deadline):
            for path in ("d/f.txt", f"d/new-{swapper.calls}.txt"):
                try:
                    write_file.func(path=path, content="pwned\n", runtime=runtime)  # type: ignore[attr-defined]
                except ToolError:
                    pass
    assert swapper.swaps > 10  # the race really ran
    assert sorted(p.name for p in outside.iterdir()) == ["f.txt"]
    assert (outside / "f.txt").read_text() == f"{OUTSIDE}\n"


def test_search_never_reads_outside_while_a_folder_is_swapped(race: tuple[Path, Path]) -> None:
    ws, _ = race
    runtime, deadline = _runtime(ws), time.monotonic() + SECONDS
    with Swapper(*race) as swapper:
        while busy(swapper, deadline):
            result = search_files.func(pattern="SECRET|inside", runtime=runtime)  # type: ignore[attr-defined]
            assert OUTSIDE not in result
    assert swapper.swaps > 10  # the race really ran


# -- property: whatever the path, read_file shows nothing from outside ----------------------

_NAMES = st.sampled_from(["..", ".", "", "up", "d", "f.txt", "out", "loop", "/", "x"])


@settings(max_examples=200, deadline=None)
@given(parts=st.lists(_NAMES, min_size=1, max_size=8), absolute=st.booleans())
def test_no_path_reads_outside(
    tmp_path_factory: pytest.TempPathFactory, parts: list[str], absolute: bool
) -> None:
    base = tmp_path_factory.mktemp("prop")
    ws = base / "ws"
    if not ws.exists():
        (ws / "d").mkdir(parents=True)
        (ws / "d" / "f.txt").write_text("inside\n")
        (base / "f.txt").write_text(f"{OUTSIDE}\n")
        (ws / "up").symlink_to("..")
        (ws / "d" / "up").symlink_to("../..")
        (ws / "out").symlink_to(base)
        (ws / "loop").symlink_to("loop")
    path = "/".join(parts)
    if absolute:
        path = f"{ws}/{path}"
    for tool, args in ((read_file, {"path": path}), (search_files, {"pattern": ".", "path": path})):
        try:
            result = tool.func(runtime=_runtime(ws), **args)  # type: ignore[attr-defined]
        except ToolError:
            continue
        assert OUTSIDE not in result


def test_protected_paths_come_from_deny_and_ask_rules_on_files() -> None:
    from agentcli.policy import Policy

    rules = [
        {"tool": "read_file", "match": ".env", "decision": "deny"},
        {"tool": "*_file", "match": "secrets", "decision": "ask"},
        {"tool": "write_file", "match": "docs/*", "decision": "allow"},
        {"tool": "shell", "match": "rm *", "decision": "deny"},
    ]
    assert Policy.build(rules=rules).protected_paths() == (".env", "secrets")
    assert Policy.build(rules=rules, auto_approve=True).protected_paths() == (".env",)
