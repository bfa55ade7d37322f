"""`agentcli review` with no thread: the inbox across threads, decisions by call id, a
decision sent twice, and `[approval] expire_after` denying a review left too long."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.e2e.conftest import Agent
from tests.helpers.scripted_server import text, tool_calls


def park(agent: Agent, workspace: Path, *call: tuple[str, dict]) -> str:
    agent.server.push(tool_calls(*call))
    parked = agent.run("run", "go", "-w", str(workspace), "-o", "json")
    assert parked.returncode == 3, parked.stderr
    return str(json.loads(parked.stdout)["thread_id"])


def audit(agent: Agent, thread: str) -> list[dict]:
    """The audit records of a thread's calls, as `threads show --json` gives them."""
    shown = json.loads(agent.run("threads", "show", thread, "--json").stdout)
    return [c["decision"] for e in shown["entries"] for c in e.get("calls", []) if c["decision"]]


def workspaces(agent: Agent) -> tuple[Path, Path]:
    one, two = agent.workspace / "one", agent.workspace / "two"
    one.mkdir()
    two.mkdir()
    return one, two


@pytest.mark.backends
def test_the_inbox_lists_and_decides_calls_of_two_workspaces(agent: Agent) -> None:
    one, two = workspaces(agent)
    first = park(agent, one, ("shell", {"command": "echo one > made.txt"}))
    second = park(agent, two, ("write_file", {"path": "notes.md", "content": "x"}))

    listed = agent.run("review", "--json")
    assert listed.returncode == 0, listed.stderr
    rows = json.loads(listed.stdout)
    assert [(r["thread_id"], r["call_id"], r["tool"], r["subject"]) for r in rows] == [
        (first, "call_1", "shell", "echo one > made.txt"),
        (second, "call_2", "write_file", "notes.md"),
    ]
    assert [r["workspace"] for r in rows] == [str(one), str(two)]
    assert all(r["waited_s"] >= 0 and r["parked_at"] and r["title"] == "go" for r in rows)
    shown = agent.run("review").stdout
    assert first in shown and second in shown and "echo one > made.txt" in shown
    assert "waiting " in shown and str(two) in shown

    agent.server.push(text("Made it."))
    decided = agent.run("review", "--approve", "call_1")  # no thread named
    assert decided.returncode == 0, decided.stderr
    assert decided.stdout.strip() == "Made it."
    assert (one / "made.txt").read_text() == "one\n"  # in the thread's own workspace

    agent.server.push(text("Not written."))
    rejected = agent.run("review", "--reject", "call_2", "--message", "not now")
    assert rejected.returncode == 0, rejected.stderr
    assert not (two / "notes.md").exists()
    assert json.loads(agent.run("review", "--json").stdout) == []

    requests = len(agent.server.requests)
    again = agent.run("review", "--approve", "call_1")  # a retrying script: safe
    assert again.returncode == 0, again.stderr
    assert "already decided: approved by person" in again.stderr
    assert "nothing changed" in again.stderr
    assert (one / "made.txt").read_text() == "one\n" and len(agent.server.requests) == requests
    named = agent.run("review", "--thread", second[:6], "--reject", "call_2")
    assert named.returncode == 0 and "already decided: feedback" in named.stderr
    other = agent.run("review", "--thread", second, "--approve", "call_2")  # not as decided
    assert other.returncode == 2 and "already decided: feedback" in other.stderr
    unknown = agent.run("review", "--approve", "call_9")
    assert unknown.returncode == 2 and "no pending call 'call_9' in any thread" in unknown.stderr
    assert len(agent.server.requests) == requests
    assert [r["decision"] for r in audit(agent, first)] == ["approved"]


def test_the_same_call_id_in_two_threads_needs_thread(agent: Agent) -> None:
    one, two = workspaces(agent)
    first = park(agent, one, ("shell", {"command": "echo one"}))
    agent.server.restart_call_ids()
    second = park(agent, two, ("shell", {"command": "echo two"}))

    both = agent.run("review", "--approve", "call_1")
    assert both.returncode == 2
    assert "call_1 is pending in 2 threads" in both.stderr and "--thread ID" in both.stderr
    assert first in both.stderr and second in both.stderr
    everything = agent.run("review", "--approve", "all")
    assert everything.returncode == 2 and "'all' needs a thread" in everything.stderr

    agent.server.push(text("Two."))
    chosen = agent.run("review", "--thread", second, "--approve", "call_1")
    assert chosen.returncode == 0, chosen.stderr
    left = json.loads(agent.run("review", "--json").stdout)
    assert [(r["thread_id"], r["call_id"]) for r in left] == [(first, "call_1")]
    legacy = agent.run("review", first, "--json")  # the positional id still works
    assert [r["call_id"] for r in json.loads(legacy.stdout)] == ["call_1"]


@pytest.mark.backends
def test_an_expired_review_is_denied_when_the_inbox_lists_it(agent: Agent) -> None:
    config = agent.workspace / "config.toml"
    config.write_text('[approval]\nexpire_after = "1s"\n')
    thread = park(agent, agent.workspace, ("shell", {"command": "echo hi > out.txt"}))
    time.sleep(1.2)  # the subject: the review's age, past expire_after (load only adds)
    listed = agent.run("review", "--config", str(config), "--json")
    assert listed.returncode == 0, listed.stderr
    assert json.loads(listed.stdout) == []
    assert f"call call_1 (shell) of thread {thread} waited longer than 1s" in listed.stderr
    assert len(agent.server.requests) == 1  # the denial asked no model, ran no tool
    assert not (agent.workspace / "out.txt").exists()

    record = audit(agent, thread)[-1]
    assert (record["decision"], record["who"], record["by"]) == (
        "expired",
        "agentcli",
        "approval.expire_after",
    )
    assert "expired after 1s" in record["feedback"]
    status = json.loads(agent.run("threads", "list", "--json").stdout)[0]["status"]
    assert status == "idle"

    agent.server.push(text("It expired; I will ask again later."))
    resumed = agent.run("run", "--thread", thread, "--config", str(config))
    assert resumed.returncode == 0, resumed.stderr
    tool = [m for m in agent.server.requests[1]["messages"] if m["role"] == "tool"]
    assert "approval request expired after 1s" in tool[0]["content"]
    assert not (agent.workspace / "out.txt").exists()
    again = agent.run("review", thread, "--approve", "call_1", "--config", str(config))
    assert again.returncode == 2 and "already decided: expired" in again.stderr


def test_an_expired_review_is_denied_when_its_thread_is_touched_and_keep_keeps(
    agent: Agent,
) -> None:
    keep = agent.workspace / "keep.toml"
    keep.write_text('[approval]\nexpire_after = "1s"\non_expire = "keep"\n')
    deny = agent.workspace / "deny.toml"
    deny.write_text('[approval]\nexpire_after = "1s"\n')
    thread = park(agent, agent.workspace, ("shell", {"command": "echo hi"}))
    time.sleep(1.2)  # the subject: the review's age, past expire_after (load only adds)
    kept = agent.run("review", "--config", str(keep), "--json")
    assert [(r["call_id"], r["expired"]) for r in json.loads(kept.stdout)] == [("call_1", True)]

    agent.server.push(text("Understood."))
    touched = agent.run("run", "--thread", thread, "--config", str(deny))
    assert touched.returncode == 0, touched.stderr
    assert "waited longer than 1s for review: denied" in touched.stderr
    assert touched.stdout.strip() == "Understood."


def test_expire_after_must_be_a_duration(agent: Agent) -> None:
    config = agent.workspace / "config.toml"
    config.write_text('[approval]\nexpire_after = "soon"\non_expire = "never"\n')
    result = agent.run("review", "--config", str(config))
    assert result.returncode == 2
    assert 'approval.expire_after = "soon"' in result.stderr and "24h" in result.stderr
    assert '"deny" or "keep"' in result.stderr


def test_the_inbox_is_refused_with_server(agent: Agent) -> None:
    result = agent.run("review", "--server", "http://127.0.0.1:9")
    assert result.returncode == 2
    assert "the inbox (agentcli review with no thread id) is not available with --server" in (
        result.stderr
    )


def test_a_call_the_policy_allowed_beside_an_expired_one_runs_with_the_thread(
    agent: Agent,
) -> None:
    (agent.workspace / "notes.txt").write_text("the milk\n")
    config = agent.workspace / "config.toml"
    config.write_text('[approval]\nallow = ["read_file"]\nexpire_after = "1s"\n')
    agent.server.push(
        tool_calls(("read_file", {"path": "notes.txt"}), ("shell", {"command": "echo hi"}))
    )
    parked = agent.run("run", "go", "--config", str(config), "-o", "json")
    assert parked.returncode == 3, parked.stderr
    thread = json.loads(parked.stdout)["thread_id"]
    time.sleep(1.2)  # the subject: the review's age, past expire_after (load only adds)
    listed = agent.run("review", "--config", str(config), "--json")
    assert json.loads(listed.stdout) == [] and "call_2 (shell)" in listed.stderr
    assert len(agent.server.requests) == 1

    agent.server.push(text("Read it."))
    resumed = agent.run("run", "--thread", thread, "--config", str(config))
    assert resumed.returncode == 0, resumed.stderr
    tools = {
        m["tool_call_id"]: m["content"]
        for m in agent.server.requests[1]["messages"]
        if m["role"] == "tool"
    }
    assert "the milk" in tools["call_1"] and "expired after 1s" in tools["call_2"]
    assert [(r["call_id"], r["decision"]) for r in audit(agent, thread)] == [
        ("call_1", "allowed"),
        ("call_2", "expired"),
    ]
