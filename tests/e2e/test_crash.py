"""Kill -9 at many points: the thread stays consistent and resumable, no user message is
lost, nothing unapproved runs, and a call cut off mid-run is never re-run silently."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
from collections.abc import Callable
from pathlib import Path

import pexpect

from tests.e2e.conftest import Agent
from tests.helpers.scripted_server import hang, text, tool_calls
from tests.helpers.stored import plain
from tests.helpers.terminal import CHOICE
from tests.helpers.waiting import NeverHappened, until

WAIT_FOR_GO = "for i in $(seq 300); do [ -f go ] && break; sleep 0.1; done"


def kill_when(child: subprocess.Popen[str], ready: Callable[[], bool]) -> None:
    """SIGKILL `child` once `ready()`; if it exits first, the failure carries its stderr."""
    try:
        until(ready, what="the moment to kill", process=child)
    except NeverHappened as never:
        _, printed = child.communicate(timeout=60)
        raise NeverHappened(f"{never}\nits stderr:\n{printed}") from None
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=60)


def only_thread(agent: Agent) -> dict:
    rows = json.loads(agent.run("threads", "list", "--json").stdout)
    assert len(rows) == 1
    return rows[0]


def lines(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


def exported(agent: Agent, thread: str) -> list[dict]:
    return json.loads(agent.run("threads", "export", thread, "--format", "json").stdout)["messages"]


def killed_mid_call(agent: Agent) -> str:
    """`run -y` killed while its approved shell call runs (it wrote ran.log and waits for
    `go`): the thread's id."""
    ws = agent.workspace
    agent.server.push(tool_calls(("shell", {"command": f"echo x >> ran.log; {WAIT_FOR_GO}"})))
    child = agent.start("run", "run it", "-y")
    kill_when(child, lambda: lines(ws / "ran.log") == 1)  # created, and written
    return str(only_thread(agent)["thread_id"])


def test_killed_while_the_model_streams(agent: Agent) -> None:
    agent.server.push(hang(30))
    child = agent.start("run", "remember the milk", "-y")
    kill_when(child, lambda: len(agent.server.requests) == 1)
    thread = only_thread(agent)["thread_id"]
    assert [m["data"]["content"] for m in exported(agent, thread)] == ["remember the milk"]
    agent.server.push(text("Noted."))
    again = agent.run("run", "--thread", thread)
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == "Noted."


def test_killed_while_an_approved_tool_runs(agent: Agent) -> None:
    ws = agent.workspace
    thread = killed_mid_call(agent)
    # resumed with the same flags: the cut-off call is asked about, not re-run
    parked = agent.run("run", "--thread", thread, "-y", "-o", "json")
    assert parked.returncode == 3, parked.stderr
    (pending,) = json.loads(parked.stdout)["pending"]
    assert pending["tool"] == "shell" and lines(ws / "ran.log") == 1
    listed = json.loads(agent.run("review", thread, "--json").stdout)
    assert listed[0]["call_id"] == pending["call_id"]
    shown = agent.run("review", thread)
    assert "possibly partly run" in shown.stdout
    (ws / "go").touch()
    agent.server.push(text("Ran it again, as you said."))
    approved = agent.run("review", thread, "--approve", "all")
    assert approved.returncode == 0, approved.stderr
    assert lines(ws / "ran.log") == 2  # once before the kill, once approved again


def test_killed_between_the_tools_of_one_turn(agent: Agent) -> None:
    """The first call ended, the second was cut off, the third waited for it: after the
    crash the second is asked about, and the third runs only once the second has run again."""
    ws = agent.workspace
    agent.server.push(
        tool_calls(
            ("shell", {"command": "echo a >> fast.log"}),
            ("shell", {"command": f"echo b >> slow.log; {WAIT_FOR_GO}; echo b >> slow.end"}),
            # what the third finds when it runs: how often the second has ended by then
            ("shell", {"command": "echo c >> after.log; cat slow.end > seen.by.c"}),
        )
    )
    child = agent.start("run", "two things", "-y")

    def fast_result_saved() -> bool:  # a write with call_1's result alone (not the AI turn's)
        with sqlite3.connect(agent.db) as conn:
            rows = conn.execute("SELECT type, value FROM writes WHERE channel = 'messages'")
            values = [plain(kind, value) for kind, value in rows.fetchall()]
        return any(b"call_1" in value and b"call_2" not in value for value in values)

    kill_when(child, lambda: lines(ws / "slow.log") == 1 and fast_result_saved())
    thread = only_thread(agent)["thread_id"]
    parked = agent.run("run", "--thread", thread, "-o", "json")
    assert parked.returncode == 3, parked.stderr
    assert [p["call_id"] for p in json.loads(parked.stdout)["pending"]] == ["call_2"]
    assert not (ws / "after.log").exists()
    agent.server.push(text("Ran the slow one again, then the last."))
    approving = agent.start("review", thread, "--approve", "all")
    # the cut-off call runs again, waiting for `go`
    until(lambda: lines(ws / "slow.log") == 2, what="the second ran again", process=approving)
    assert not (ws / "after.log").exists()
    (ws / "go").touch()
    assert approving.wait(timeout=180) == 0, approving.communicate()
    assert lines(ws / "fast.log") == 1 and lines(ws / "after.log") == 1  # once each
    assert lines(ws / "seen.by.c") == 1  # the third ran after the second's second run ended
    results = {
        m["data"]["tool_call_id"]: m["data"]["content"]
        for m in exported(agent, thread)
        if m["type"] == "tool"
    }
    assert all(results[c].startswith("exit code 0") for c in ("call_1", "call_2", "call_3"))
    (ws / "go").touch()


def test_killed_at_the_review_prompt(agent: Agent) -> None:
    agent.server.push(tool_calls(("write_file", {"path": "a.txt", "content": "x"})))
    child = agent.spawn("chat", "write a.txt")
    child.expect(CHOICE)
    child.kill(signal.SIGKILL)
    child.expect(pexpect.EOF)
    thread = only_thread(agent)["thread_id"]
    assert not (agent.workspace / "a.txt").exists()
    listed = json.loads(agent.run("review", thread, "--json").stdout)
    assert [p["tool"] for p in listed] == ["write_file"]
    agent.server.push(text("Written."))
    assert agent.run("review", thread, "--approve", "all").returncode == 0
    assert (agent.workspace / "a.txt").read_text() == "x"


def test_a_cut_off_call_is_pending_at_once_everywhere_and_can_be_marked_done(
    agent: Agent,
) -> None:
    ws = agent.workspace
    thread = killed_mid_call(agent)
    # no run in between: the index, the review list and the chat all show it straight away
    assert only_thread(agent)["status"] == "awaiting_approval"
    (listed,) = json.loads(agent.run("review", thread, "--json").stdout)
    assert listed["call_id"] == "call_1" and listed["rerun"] == "started"
    assert len(agent.server.requests) == 1  # nothing asked the model since the kill
    shell = agent.spawn("resume", thread)
    shell.expect("possibly partly run")
    shell.expect(r"\[d\]one")
    agent.server.push(text("Understood: its result is unknown."))
    shell.sendline("d")
    shell.expect("Understood: its result is unknown.")
    shell.sendline("/exit")
    shell.expect(pexpect.EOF)
    told = agent.server.requests[-1]["messages"][-1]
    assert told["tool_call_id"] == "call_1"
    assert "marked this call as done; its result is unknown" in told["content"]
    assert lines(ws / "ran.log") == 1  # not run again
    assert only_thread(agent)["status"] == "idle"
    (ws / "go").touch()


def test_review_done_decides_a_cut_off_call_from_a_script(agent: Agent) -> None:
    ws = agent.workspace
    thread = killed_mid_call(agent)
    parked = agent.run("run", "--thread", thread, "-y", "-o", "json")
    assert parked.returncode == 3 and len(agent.server.requests) == 1
    agent.server.push(text("Fine."))
    decided = agent.run("review", thread, "--done", "call_1")
    assert decided.returncode == 0, decided.stderr
    assert "its result is unknown" in agent.server.requests[-1]["messages"][-1]["content"]
    assert lines(ws / "ran.log") == 1
    audit = [c["decision"] for c in exported_audit(agent, thread)]
    assert "marked done" in audit
    (ws / "go").touch()


def exported_audit(agent: Agent, thread: str) -> list[dict]:
    return json.loads(agent.run("threads", "export", thread, "--format", "json").stdout)["audit"]
