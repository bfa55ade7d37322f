"""A call's name is its own (issue 25, item 6): whatever call id the model sends, every place
that names a waiting call (`review`, `review --json`, `run -o json`, the notify document)
names it with an id in the safe alphabet and its digest, and that name decides exactly the
call it was listed for, never another thread's or another of the same answer.

Each payload is the call id a hostile (or sloppy) server sends for a call in thread C, while
thread A waits on `call_1` with digest D: `{A}` in a payload is A's name, `call_1@D`, and
`{D}` is D alone. A payload got through if C's call is listed under a name that is not in
the safe alphabet, or under a name that approves A's call (or nothing, or both).
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.conftest import Agent
from tests.helpers.scripted_server import text, tool_calls

SAFE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]{0,63}")
NAME = re.compile(SAFE.pattern + r"@[0-9a-f]{12}")

SAMPLE = 8  # each payload takes some ten agentcli starts: one in 8 runs by default (-m slow: all)
PAYLOADS = [
    "{A}",  # another thread's call, as review lists it
    "{A}@{D}",
    "{A}@000000000000",
    "call_1@{D} ",
    " {A}",
    "{D}",  # an id that is A's digest
    "{D6}",  # a digest prefix
    "call_1@",
    "@{D}",
    "@",
    "@@@@",
    "call_1 {A}",  # whitespace: the inbox's columns are two spaces apart
    "call_1  shell  touch x",
    "call_1\t{A}",
    "call_1\n  {A}  shell",
    "call_1\r{A}",
    "call_1\x1b[2K\r{A}",
    "call_1\x00{D}",
    "call_1\x7f",
    "call_1\u202e{D}",  # bidi override
    "\u2066{A}\u2069",
    "call\u200b_1",  # zero-width space: reads as call_1
    "call_1\ufeff",
    "call_1\u2060@{D}",
    "ｃａｌｌ＿１",  # fullwidth: reads as call_1
    "call_1\u0338",  # a combining mark
    "\U000e0063\U000e0061call_1",  # tag characters
    "call_1\ud800",  # a lone surrogate (JSON allows its escape)
    "c" * 5000,  # very long
    "call_1" + "\u200b" * 300,
    "$(touch PWNED_subst)",  # a shell command when the name is pasted
    "call_1;touch PWNED_semi",
    "`touch PWNED_tick`",
    "-rf",
    "--approve",
    "call_1.1",  # a plan task's id
    "../../etc/passwd",
    "call_1%40{D}",
    "[bold]call_1[/bold]",  # Rich markup
    "⟦ESC⟧call_1",  # posing as a mark
]


def park(agent: Agent, workspace: Path, command: str, ids: list[str] | None = None) -> dict:
    agent.server.push(tool_calls(("shell", {"command": command}), ids=ids))
    parked = agent.run("run", "go", "-w", str(workspace), "-o", "json")
    assert parked.returncode == 3, parked.stderr
    return dict(json.loads(parked.stdout))


def listed(agent: Agent) -> list[dict]:
    result = agent.run("review", "--json")
    assert result.returncode == 0, result.stderr
    return list(json.loads(result.stdout))


def name(row: dict) -> str:
    return f"{row['call_id']}@{row['digest']}"


def two_threads(agent: Agent) -> tuple[Path, Path]:
    a, c = agent.workspace / "a", agent.workspace / "c"
    a.mkdir()
    c.mkdir()
    return a, c


@pytest.mark.parametrize("payload", PAYLOADS)
def test_a_call_id_never_names_another_threads_call(
    agent: Agent, payload: str, tmp_path: Path
) -> None:
    a, c = two_threads(agent)
    first = park(agent, a, "touch ran_a")
    [call_a] = first["pending"]
    d = call_a["digest"]
    sent = payload.format(A=f"call_1@{d}", D=d, D6=d[:6])
    told = tmp_path / "told.json"
    notify = agent.workspace.parent / "notify.toml"
    notify.write_text(f"[notify]\ncommand = {json.dumps(f'cat > {shlex.quote(str(told))}')}\n")
    agent.server.push(tool_calls(("shell", {"command": "touch ran_c"}), ids=[sent]))
    parked = agent.run("run", "go", "-w", str(c), "-o", "json", "--config", str(notify))
    assert parked.returncode == 3, parked.stderr
    [call_c] = json.loads(parked.stdout)["pending"]

    assert SAFE.fullmatch(call_c["call_id"]), call_c["call_id"]
    rows = listed(agent)
    by_thread = {row["thread_id"]: row for row in rows}
    assert len(by_thread) == 2 and first["thread_id"] in by_thread
    row_c = next(row for row in rows if row["thread_id"] != first["thread_id"])
    row_a = by_thread[first["thread_id"]]
    [told_c] = json.loads(told.read_text())["pending"]
    # every place names C's call alike, and A's name is not C's
    assert name(row_c) == name(call_c) == name(told_c) and name(row_a) == name(call_a)
    assert name(row_c) != name(row_a) and NAME.fullmatch(name(row_c))
    shown = agent.run("review").stdout
    assert f"  {name(row_c)}  shell  touch ran_c" in shown
    assert f"  {name(row_a)}  shell  touch ran_a" in shown
    assert len(shown.splitlines()) == 4  # two lines a call: no id breaks a line

    agent.server.push(text("C done."))
    decided = agent.run("review", "--approve", name(row_c))
    assert decided.returncode == 0, decided.stderr
    assert (c / "ran_c").exists() and not (a / "ran_c").exists() and not (a / "ran_a").exists()
    assert [name(row) for row in listed(agent)] == [name(row_a)]
    answered = agent.server.requests[-1]["messages"]  # the model's ids and answers agree
    [asked] = [m for m in answered if m["role"] == "assistant" and m.get("tool_calls")]
    [result] = [m for m in answered if m["role"] == "tool"]
    assert asked["tool_calls"][0]["id"] == result["tool_call_id"] == row_c["call_id"]

    agent.server.push(text("A done."))
    decided = agent.run("review", "--approve", name(row_a))
    assert decided.returncode == 0, decided.stderr
    assert (a / "ran_a").exists() and listed(agent) == []
    assert not list(agent.workspace.rglob("PWNED*"))


# pairs of ids of one answer that the safe alphabet folds to one text, or that differ in case
FOLDED = [
    ["call@1", "call_1"],
    ["call 1", "call\t1", "call\n1"],
    ["x" * 64 + "a", "x" * 64 + "b"],  # differ past the length kept
    ["call_1", "CALL_1", "Call_1"],  # differ in case: each is its own
    ["\u202ecall", "\u2066call", "_call"],
    ["", "", None],
    ["call_1", "call_1"],
]


@pytest.mark.parametrize("ids", FOLDED)
def test_calls_of_one_answer_keep_a_name_each(agent: Agent, ids: list[str | None]) -> None:
    commands = [f"touch ran_{n}" for n in range(len(ids))]
    agent.server.push(
        tool_calls(*[("shell", {"command": c}) for c in commands], ids=ids)  # type: ignore[arg-type]
    )
    parked = agent.run("run", "go", "-o", "json")
    assert parked.returncode == 3, parked.stderr
    pending = json.loads(parked.stdout)["pending"]
    names = [name(row) for row in pending]
    assert len({row["call_id"] for row in pending}) == len(ids) and all(map(NAME.fullmatch, names))
    assert [row["args"]["command"] for row in pending] == commands
    assert [name(row) for row in listed(agent)] == names
    # one review: every other call approved, the rest rejected, each by the name listed
    decisions = [("--approve" if n % 2 == 0 else "--reject", names[n]) for n in range(len(ids))]
    agent.server.push(text("done"))
    decided = agent.run("review", *[part for pair in reversed(decisions) for part in pair])
    assert decided.returncode == 0, decided.stderr
    ran = sorted(p.name for p in agent.workspace.glob("ran_*"))
    assert ran == [f"ran_{n}" for n in range(0, len(ids), 2)]
    assert listed(agent) == []


# Run as agentcli ran before ids were made safe: the model's ids stored as they came.
BEFORE = (
    "import sys; import agentcli.agent.agent_graph as g; g.with_call_ids = lambda reply: reply;"
    " from agentcli.cli import main; sys.argv[0] = 'agentcli'; main()"
)


def run_as_before(agent: Agent, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", BEFORE, *args],
        capture_output=True,
        text=True,
        env=agent.env,
        cwd=agent.workspace,
        timeout=60,
    )


@pytest.mark.parametrize("payload", ["{A}", "call_1 {A}", "call\u200b_1", "$(touch PWNED)"])
def test_a_thread_stored_before_ids_were_made_safe_resumes(agent: Agent, payload: str) -> None:
    a, c = two_threads(agent)
    first = park(agent, a, "touch ran_a")
    d = first["pending"][0]["digest"]
    sent = payload.format(A=f"call_1@{d}")
    agent.server.push(tool_calls(("shell", {"command": "touch ran_c"}), ids=[sent]))
    parked = run_as_before(agent, "run", "go", "-w", str(c), "-o", "json")
    assert parked.returncode == 3, parked.stderr
    [old] = json.loads(parked.stdout)["pending"]
    assert old["call_id"] == sent  # stored as it came, as before
    rows = listed(agent)  # the installed command lists it, under the name it had
    row_c = next(row for row in rows if row["thread_id"] != first["thread_id"])
    assert name(row_c) == f"{sent}@{old['digest']}"
    # its own name decides it; A's name is still A's call
    agent.server.push(tool_calls(("shell", {"command": "touch again_c"})))
    decided = agent.run("review", "--approve", name(row_c))
    assert decided.returncode == 3, decided.stderr  # it ran, and the model asked for more
    assert (c / "ran_c").exists() and not (a / "ran_a").exists()
    sent_back = agent.server.requests[-1]["messages"]
    [result] = [m for m in sent_back if m["role"] == "tool"]
    assert result["tool_call_id"] == sent  # the history the model sees is unchanged
    rows = listed(agent)
    new_c = next(row for row in rows if row["thread_id"] != first["thread_id"])
    assert SAFE.fullmatch(new_c["call_id"]) and new_c["args"] == {"command": "touch again_c"}
    agent.server.push(text("C done."))
    assert agent.run("review", "--approve", name(new_c)).returncode == 0
    agent.server.push(text("A done."))
    assert agent.run("review", "--approve", f"call_1@{d}").returncode == 0
    assert (a / "ran_a").exists() and (c / "again_c").exists() and listed(agent) == []
    assert not list(agent.workspace.rglob("PWNED*"))
