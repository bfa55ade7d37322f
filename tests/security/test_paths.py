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

import agentcli_tools.search
import pytest
from agentcli_tools.base import ToolError
from agentcli_tools.context import ToolContext
from agentcli_tools.dir_listing import list_dir
from agentcli_tools.file_reading import read_file
from agentcli_tools.file_writing import edit_file, write_file
from agentcli_tools.search import search_files
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.e2e.conftest import Agent
from tests.helpers.scripted_server import text, tool_calls
from tests.helpers.waiting import ends

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
    # lead outside the workspace (or nowhere): the tool's precheck sends them back unasked
    outside = {
        "docs/out-dir/evil.txt",
        "docs/out-link",
        "docs/loop",
        "/proc/self/cwd/docs/up/evil.txt",
        "../work/docs/up/evil.txt",
    }
    expected = [spelled(p, ws) for p in PAYLOADS_WRITE if p not in denied | outside]
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


ITERATIONS, SWAPS, SECONDS = 3000, 1000, 10.0
PAUSE_EVERY, PAUSE_S = 20, 0.002


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
            if self.swaps % PAUSE_EVERY == 0:  # the folder stays a while: reads must work then
                time.sleep(PAUSE_S)

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


# -- follow-up review: what a rule tests, and the tools checking again when they open ------------


def _policy(*rules: tuple[str, str, str], **flags: Any) -> Any:
    from agentcli.policy.approval_policy import Policy

    return Policy.build(
        rules=[{"tool": t, "match": m, "decision": d} for t, m, d in rules], **flags
    )


def _context(ws: Path, *rules: tuple[str, str, str], **flags: Any) -> Any:
    from agentcli.agent.state import RunContext

    return SimpleNamespace(context=RunContext(workspace=ws, policy=_policy(*rules, **flags)))


# Extra keys on a built-in tool's call: each once tried to make the rules test something else
PAYLOADS_EXTRA_KEYS: list[tuple[str, dict[str, Any]]] = [
    ("write_file", {"path": ".git/config", "content": "x", "url": "http://notes.md"}),
    ("read_file", {"path": "dotlink", "url": "http://x.com"}),
    ("edit_file", {"path": ".env", "old_text": "a", "new_text": "b", "url": "http://a.md"}),
    ("list_dir", {"path": ".", "url": "http://a.md"}),
    ("search_files", {"pattern": "x", "url": "http://a.md"}),
    ("shell", {"command": "rm -rf x", "path": "docs/a.md"}),
    ("fetch_url", {"url": "http://evil.com/", "path": "docs/a.md"}),
    ("calculator", {"expression": "1+1", "command": "ls"}),
    ("read_file", {"path": "a", "runtime": {}}),
]


@pytest.mark.parametrize(("tool", "args"), PAYLOADS_EXTRA_KEYS)
def test_built_in_tools_refuse_arguments_they_do_not_take(tool: str, args: dict) -> None:
    from agentcli_tools.registry import BUILTIN_TOOLS

    from agentcli.agent.review.argument_check import validate_args

    problem = validate_args(BUILTIN_TOOLS[tool], dict(args))
    assert problem is not None and "unknown" in problem
    known = set(BUILTIN_TOOLS[tool].tool_call_schema.model_fields)
    assert validate_args(BUILTIN_TOOLS[tool], {k: v for k, v in args.items() if k in known}) is None


def test_a_url_key_does_not_turn_a_path_rule_into_a_host_rule(tmp_path: Path) -> None:
    ws = tmp_path
    (ws / ".git").mkdir()
    (ws / ".env").write_text("SECRET=1\n")
    (ws / "dotlink").symlink_to(".env")
    allow = _policy(("write_file", "*.md", "allow"))
    args = {"path": ".git/config", "content": "x", "url": "http://notes.md"}
    assert allow.decide("write_file", args, workspace=ws).decision == "ask"
    assert allow.decide("write_file", {"path": "a.md"}, workspace=ws).decision == "allow"
    deny = _policy(("read_file", ".env", "deny"))
    args = {"path": "dotlink", "url": "http://x.com"}
    assert deny.decide("read_file", args, workspace=ws).decision == "deny"
    # and a path key does not turn a host rule into a path rule
    hosts = _policy(("fetch_url", "evil.com", "deny"))
    args = {"url": "https://evil.com/", "path": "x"}
    assert hosts.decide("fetch_url", args).decision == "deny"


def test_rules_on_other_tools_see_every_subject_and_extra_ones_never_help() -> None:
    deny = _policy(("peek", "evil.com", "deny"), ("peek", "secret/*", "deny"))
    for args in (
        {"url": "https://EVIL.com./x", "path": "docs/a"},
        {"path": "docs/../secret/key", "url": "https://good.com/"},
        {"url": "https://evil.com/"},
    ):
        assert deny.decide("peek", args).decision == "deny"
    allow = _policy(("peek", "docs/*", "allow"), ("peek", "good.com", "allow"))
    assert allow.decide("peek", {"path": "docs/a"}).decision == "allow"
    assert allow.decide("peek", {"url": "https://good.com/"}).decision == "allow"
    # an allow rule must hold for every subject the call carries
    assert allow.decide("peek", {"path": "docs/a", "url": "http://evil.com/"}).decision == "ask"
    assert allow.decide("peek", {"path": "docs/a", "url": "not a url"}).decision == "ask"


def test_e2e_an_extra_argument_goes_back_to_the_model(agent: Agent) -> None:
    ws = agent.workspace
    (ws / ".git").mkdir()
    (ws / ".git" / "config").write_text("[core]\n")
    write_config(
        agent, '[[approval.rules]]\ntool = "write_file"\nmatch = "*.md"\ndecision = "allow"\n'
    )
    call = ("write_file", {"path": ".git/config", "content": "pwned", "url": "http://notes.md"})
    agent.server.push(tool_calls(call), text("done"))
    result = agent.run("run", "go", "-o", "json")
    assert result.returncode == 0, result.stdout + result.stderr
    assert (ws / ".git" / "config").read_text() == "[core]\n"
    assert "unknown 'url'" in next(iter(tool_messages(agent).values()))


# `..` after a name that does not exist: the policy could not walk it, the tool must not either
PAYLOADS_DOTDOT = [
    "x/../refs/../config",
    "x/../refs/../../.git/config",
    "x/y/../../refs/../config",
    "x/../x/../refs/../config",
    "{ws}/x/../refs/../config",
    "refs/../x/../refs/../config",
    "a/b/c/../../../../escape.txt",
    "a/b/c/../../../.git/config",
    "docs/new/../../refs/../config",
]


@pytest.mark.parametrize("path", PAYLOADS_DOTDOT)
def test_dotdot_after_a_missing_name_neither_passes_the_rules_nor_writes(
    tmp_path: Path, path: str
) -> None:
    ws = tmp_path / "ws"
    (ws / ".git" / "refs").mkdir(parents=True)
    (ws / "docs").mkdir()
    (ws / ".git" / "config").write_text("[core]\n")
    (ws / "refs").symlink_to(".git/refs")
    path = path.format(ws=ws)
    before = sorted(str(p) for p in tmp_path.rglob("*"))
    policy = _policy(("write_file", ".git", "ask"), ("write_file", "*", "allow"))
    verdict = policy.decide("write_file", {"path": path, "content": "x"}, workspace=ws)
    assert verdict.decision == "ask" or verdict.by == "default"  # never allowed
    with pytest.raises(ToolError):
        write_file.func(path=path, content="pwned", runtime=_runtime(ws))  # type: ignore[attr-defined]
    assert (ws / ".git" / "config").read_text() == "[core]\n"
    assert sorted(str(p) for p in tmp_path.rglob("*")) == before  # no folder left behind


_PARTS = st.sampled_from(["x", "..", "refs", "up", "config", ".git", "d", "."])


@settings(max_examples=300, deadline=None)
@given(parts=st.lists(_PARTS, min_size=1, max_size=7))
def test_the_tool_writes_exactly_where_the_policy_saw_the_path_lead(
    tmp_path_factory: pytest.TempPathFactory, parts: list[str]
) -> None:
    from agentcli_tools.paths import resolve_relative

    ws = tmp_path_factory.mktemp("agree") / "ws"
    (ws / ".git" / "refs").mkdir(parents=True)
    (ws / "d").mkdir()
    (ws / "refs").symlink_to(".git/refs")
    (ws / "d" / "up").symlink_to("..")
    path = "/".join(parts)
    seen = resolve_relative(ws, path)
    before = {p.relative_to(ws).as_posix() for p in ws.rglob("*")}
    try:
        write_file.func(path=path, content="written\n", runtime=_runtime(ws))  # type: ignore[attr-defined]
    except ToolError:
        assert {p.relative_to(ws).as_posix() for p in ws.rglob("*")} == before
        return
    assert seen is not None
    assert (ws / seen).read_text() == "written\n"
    written = {
        p.relative_to(ws).as_posix()
        for p in ws.rglob("*")
        if p.is_file() and not p.is_symlink() and p.read_text() == "written\n"
    }
    assert written == {seen}


def test_search_and_list_dir_on_the_server_skip_what_the_rules_protect(tmp_path: Path) -> None:
    from agentcli.config import Settings
    from agentcli.server.graph import context_schema

    ws = tmp_path
    (ws / ".env").write_text(f"SECRET={SECRET}\n")
    (ws / "plain.txt").write_text("SECRET=none\n")
    settings = Settings(rules=[{"tool": "read_file", "match": ".env", "decision": "deny"}])
    context = context_schema(settings, tmp_path)()
    found = search_files.func(pattern="SECRET", runtime=SimpleNamespace(context=context))  # type: ignore[attr-defined]
    assert SECRET not in found and "plain.txt:1" in found
    listed = list_dir.func(runtime=SimpleNamespace(context=context))  # type: ignore[attr-defined]
    assert ".env" not in listed and "plain.txt" in listed


def test_an_absolute_deny_rule_protects_in_search_as_in_decide(tmp_path: Path) -> None:
    ws = tmp_path
    (ws / "secrets").mkdir()
    (ws / "secrets" / "key").write_text(f"SECRET={SECRET}\n")
    (ws / "plain.txt").write_text("SECRET=none\n")
    rule = ("read_file", f"{ws}/secrets/*", "deny")
    policy = _policy(rule)
    assert policy.decide("read_file", {"path": "secrets/key"}, workspace=ws).decision == "deny"
    found = search_files.func(pattern="SECRET", runtime=_context(ws, rule))  # type: ignore[attr-defined]
    assert SECRET not in found and "plain.txt:1" in found
    # a glob outside the workspace matches nothing inside it (and no path leads outside)
    other = _policy(("read_file", "/elsewhere/plain.txt", "deny"))
    assert other.decide("read_file", {"path": "plain.txt"}, workspace=ws).decision == "ask"


def test_the_review_shows_the_file_that_will_be_written(tmp_path: Path) -> None:
    from agentcli.ui.call_preview import preview

    ws = tmp_path
    (ws / ".git").mkdir()
    (ws / ".git" / "config").write_text("[core]\n")
    (ws / "NOTES.md").symlink_to(".git/config")
    shown = preview("write_file", {"path": "NOTES.md", "content": "hooks\n"}, ws)
    assert shown.kind == "diff"
    assert shown.text.startswith("# NOTES.md -> .git/config (through a link)")
    assert "--- a/.git/config\n+++ b/.git/config\n" in shown.text
    assert "a/NOTES.md" not in shown.text
    (ws / "docs").mkdir()
    plain = preview("write_file", {"path": "./docs/../README.md", "content": "x\n"}, ws)
    assert plain.text.startswith("--- /dev/null\n+++ b/README.md\n")  # no link: no mark


# files a call may reach once a link changed after its review (notes.md -> .env)
PAYLOADS_SWAPPED: list[tuple[Any, dict[str, Any]]] = [
    (read_file, {"path": "notes.md"}),
    (write_file, {"path": "notes.md", "content": "pwned"}),
    (edit_file, {"path": "notes.md", "old_text": "SECRET", "new_text": "pwned"}),
    (list_dir, {"path": "folder"}),
    (search_files, {"pattern": "SECRET", "path": "notes.md"}),
    (read_file, {"path": "folder/plain.txt"}),  # folder -> ., plain.txt -> .env
]


@pytest.mark.parametrize(("tool", "args"), PAYLOADS_SWAPPED)
@pytest.mark.parametrize("decision", ["deny", "ask"])
def test_a_link_changed_after_the_review_is_checked_again(
    tmp_path: Path, tool: Any, args: dict[str, Any], decision: str
) -> None:
    ws = tmp_path
    (ws / ".env").write_text(f"SECRET={SECRET}\n")
    (ws / "notes.md").write_text("SECRET=none, just notes\n")
    (ws / "folder").mkdir()
    (ws / "folder" / "plain.txt").write_text("SECRET=none\n")
    runtime = _context(ws, ("read_file", ".env", decision))
    verdict = runtime.context.policy.decide(tool.name, args, workspace=ws)
    assert verdict.decision == "ask" and verdict.by == "default"  # reviewed: nothing protected
    (ws / "notes.md").unlink()
    (ws / "notes.md").symlink_to(".env")  # an allowed shell call, in the same turn
    shutil.rmtree(ws / "folder")
    (ws / "folder").symlink_to(".")
    (ws / "plain.txt").symlink_to(".env")
    try:
        result = tool.func(runtime=runtime, **args)
    except ToolError as exc:
        assert "protect" in str(exc)
        result = str(exc)
    assert SECRET not in result
    if tool is list_dir:  # not even the protected entry (links to it show where they lead)
        assert not [line for line in result.splitlines() if line.endswith("  .env")]
    assert (ws / ".env").read_text() == f"SECRET={SECRET}\n"


def test_a_protected_file_named_and_approved_is_opened(tmp_path: Path) -> None:
    ws = tmp_path
    (ws / "secrets").mkdir()
    (ws / "secrets" / "key").write_text("KEY=1\n")
    (ws / "alias").symlink_to("secrets/key")
    rule = ("*_file", "secrets/*", "ask")
    # a person approved this call under the ask rule: it runs
    assert "KEY=1" in read_file.func(path="secrets/key", runtime=_context(ws, rule))  # type: ignore[attr-defined]
    # a path that reached it through a link was reviewed as something else: refused
    with pytest.raises(ToolError, match="protect"):
        read_file.func(path="alias", runtime=_context(ws, rule))  # type: ignore[attr-defined]
    # --auto-approve and --approve read_file override ask rules: nothing to check again
    assert "KEY=1" in read_file.func(path="alias", runtime=_context(ws, rule, auto_approve=True))  # type: ignore[attr-defined]
    by_flag = _context(ws, rule, flag_allow=["read_file"])
    assert "KEY=1" in read_file.func(path="alias", runtime=by_flag)  # type: ignore[attr-defined]
    # a deny rule is never passed, however the path is named
    with pytest.raises(ToolError, match="denied by rule 1"):
        read_file.func(path="alias", runtime=_context(ws, ("*_file", "secrets", "deny")))  # type: ignore[attr-defined]


PAYLOADS_UNENCODABLE = ["a\ud800b", "\udfff", "docs/\ud83d", "\ud800/../.env", ".env\udbff"]


@pytest.mark.parametrize("path", PAYLOADS_UNENCODABLE)
def test_unencodable_paths_are_refused_cleanly_without_leaking_descriptors(
    tmp_path: Path, path: str
) -> None:
    from agentcli_tools.paths import resolve_relative

    (tmp_path / ".env").write_text(f"SECRET={SECRET}\n")
    policy = _policy(("read_file", ".env", "deny"), ("*_file", "*", "allow"))
    fds = len(os.listdir("/proc/self/fd"))
    for _ in range(50):
        verdict = policy.decide("read_file", {"path": path}, workspace=tmp_path)
        assert verdict.decision != "allow"
        assert resolve_relative(tmp_path, path) is None
        for tool, args in ((read_file, {}), (write_file, {"content": "x"}), (list_dir, {})):
            with pytest.raises(ToolError):
                tool.func(path=path, runtime=_runtime(tmp_path), **args)  # type: ignore[attr-defined]
    assert len(os.listdir("/proc/self/fd")) == fds


def test_no_walk_leaks_a_descriptor(tmp_path: Path) -> None:
    from agentcli_tools.paths import resolve_relative

    (tmp_path / "loop").symlink_to("loop")
    (tmp_path / "f").write_text("x")
    fds = len(os.listdir("/proc/self/fd"))
    for path in ["loop", "f/x", "../x", "missing/../x", "a" * 5000, "f", "new/dir/f"]:
        for _ in range(20):
            resolve_relative(tmp_path, path)
    assert len(os.listdir("/proc/self/fd")) == fds


def test_read_file_bounds_its_work_on_a_huge_file(tmp_path: Path) -> None:
    big = tmp_path / "big.log"
    with big.open("wb") as f:
        f.write(b"first line\n" * 1000)
        f.truncate(1024**4)  # sparse: 1 TB of holes after 11 KB of text, minutes to read
    result = ends(
        lambda: read_file.func(path="big.log", limit=1, runtime=_runtime(tmp_path)),  # type: ignore[attr-defined]
        what="read_file stopped counting at its bound",
    )
    assert "first line" in result and "too long to count its lines" in result
    assert "offset=2" in result
    small = tmp_path / "small.txt"
    small.write_text("a\nb\nc\n")
    assert "[lines 1-1 of 3 shown" in read_file.func(
        path="small.txt", limit=1, runtime=_runtime(tmp_path)
    )  # type: ignore[attr-defined]


def test_read_file_and_search_stop_when_the_person_interrupts(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello\n" * 100_000)
    runtime = _runtime(tmp_path)
    runtime.context.cancel = threading.Event()
    assert "hello" in read_file.func(path="a.txt", runtime=runtime)  # type: ignore[attr-defined]
    runtime.context.cancel.set()
    for tool, args in ((read_file, {"path": "a.txt"}), (search_files, {"pattern": "hello"})):
        with pytest.raises(ToolError, match="interrupted"):
            tool.func(runtime=runtime, **args)  # type: ignore[attr-defined]


PAYLOADS_SLOW_REGEX = ["(a|aa)+$", "(aa|a)+$", "(a|aa)+c"]


@pytest.mark.parametrize("pattern", PAYLOADS_SLOW_REGEX)
def test_a_backtracking_pattern_stops_within_the_time_budget(
    tmp_path: Path, pattern: str, monkeypatch: pytest.MonkeyPatch
) -> None:

    monkeypatch.setattr(agentcli_tools.search, "REGEX_SECONDS", 1.0)
    (tmp_path / "a.txt").write_text(("a" * 40 + "b\n") * 20)
    (tmp_path / "ok.txt").write_text("aaab\n")
    outcome: list[str] = []

    def run() -> None:
        try:
            outcome.append(search_files.func(pattern=pattern, runtime=_runtime(tmp_path)))  # type: ignore[attr-defined]
        except ToolError as exc:
            outcome.append(str(exc))

    ends(run, what="the search stopped at its time budget")  # matching it out: many minutes
    assert "took more than 1 s" in outcome[0]
    assert "ok.txt:1" in search_files.func(pattern="a+b$", runtime=_runtime(tmp_path))  # type: ignore[attr-defined]


PAYLOADS_BAD_RULES = [
    ("fetch_url", "https://evil.com/*"),
    ("fetch_url", "evil.com/*"),
    ("fetch_url", "evil.com:443"),
    ("fetch_url", "*.evil.com:*"),
    ("fetch_url", "user@evil.com"),
    ("fetch_url", "[::1]:8080"),
    ("fetch_*", "http://evil.com"),
    ("read_file", "../secrets/*"),
    ("*_file", "docs/../.env"),
    ("list_dir", ".."),
]
GOOD_RULES = [
    ("fetch_url", "evil.com"),
    ("fetch_url", "*.evil.com"),
    ("fetch_url", "::1"),
    ("fetch_url", "127.0.0.1"),
    ("read_file", "secrets/*"),
    ("read_file", "/abs/secrets/*"),
    ("*", "docs/*"),
    ("shell", "cd .. && rm *"),
]


@pytest.mark.parametrize(("tool", "match"), PAYLOADS_BAD_RULES)
def test_a_rule_that_can_never_match_is_a_config_error(
    tmp_path: Path, tool: str, match: str
) -> None:
    from agentcli.config import load_settings
    from agentcli.errors import ConfigError

    config = tmp_path / "config.toml"
    rule = f'[[approval.rules]]\ntool = "{tool}"\nmatch = {json.dumps(match)}\ndecision = "deny"\n'
    config.write_text(rule)
    with pytest.raises(ConfigError) as caught:
        load_settings(config)
    message = str(caught.value)
    assert (
        "\n" not in message and "[[approval.rules]] number 1" in message and repr(match) in message
    )
    assert ("write the host" if tool.startswith("fetch") else 'without ".."') in message


@pytest.mark.parametrize(("tool", "match"), GOOD_RULES)
def test_rules_that_can_match_load(tmp_path: Path, tool: str, match: str) -> None:
    from agentcli.config import load_settings

    config = tmp_path / "config.toml"
    rule = f'[[approval.rules]]\ntool = "{tool}"\nmatch = {json.dumps(match)}\ndecision = "deny"\n'
    config.write_text(rule)
    assert load_settings(config).rules == [{"tool": tool, "match": match, "decision": "deny"}]


def test_list_dir_does_not_show_what_a_deny_on_a_folders_contents_protects(
    tmp_path: Path,
) -> None:
    ws = tmp_path
    (ws / "secrets").mkdir()
    (ws / "secrets" / "id_rsa").write_text("KEY\n")
    (ws / "docs").mkdir()
    (ws / "docs" / "guide.md").write_text("guide\n")
    (ws / ".env").write_text("x\n")
    runtime = _context(ws, ("read_file", "secrets/**", "deny"), ("read_file", ".env", "deny"))
    listed = list_dir.func(path="secrets", runtime=runtime)  # type: ignore[attr-defined]
    assert "id_rsa" not in listed and "1 more entry not shown" in listed
    root = list_dir.func(runtime=runtime)  # type: ignore[attr-defined]
    assert ".env" not in root and "secrets/" in root and "docs/" in root
    assert "guide.md" in list_dir.func(path="docs", runtime=runtime)  # type: ignore[attr-defined]


def test_temporary_names_fit_the_name_limit_in_bytes(tmp_path: Path) -> None:
    for name in ("\u20ac" * 85, "\U0001f600" * 63, "e" * 255):  # 255, 252 and 255 bytes
        result = write_file.func(path=name, content="x\n", runtime=_runtime(tmp_path))  # type: ignore[attr-defined]
        assert result.startswith("created")
        assert (tmp_path / name).read_text() == "x\n"
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")) == []
