"""Which call `agentcli review --approve NAME` decides, against a server that numbers its
calls again (`call_1` in every thread, as some real servers do): never a call other than
the one listed (the adversarial review's two attacks), calls of several threads in one
review, and a call cut off by a crash in the inbox."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.conftest import Agent
from tests.e2e.test_crash import killed_mid_call, lines
from tests.e2e.test_inbox import park, workspaces
from tests.helpers.scripted_server import error, text, tool_calls


def listed(agent: Agent) -> list[dict]:
    result = agent.run("review", "--json")
    assert result.returncode == 0, result.stderr
    return list(json.loads(result.stdout))


def names(rows: list[dict]) -> list[tuple[str, str, str]]:
    return [(row["thread_id"], row["call_id"], row["digest"]) for row in rows]


@pytest.mark.backends
def test_a_retried_decision_never_lands_on_another_threads_call(agent: Agent) -> None:
    one, two = workspaces(agent)
    first = park(agent, one, ("shell", {"command": "echo A > a.txt"}))
    (seen,) = listed(agent)
    agent.server.push(text("A done."))
    decided = agent.run("review", "--approve", "call_1")  # the id is unique: enough
    assert decided.returncode == 0, decided.stderr
    agent.server.restart_call_ids()  # the server numbers the next thread's calls from 1
    second = park(agent, two, ("shell", {"command": "touch PWNED"}))
    agent.server.push(text("B done."))  # what the model would say if B's call ran
    requests = len(agent.server.requests)

    retried = agent.run("review", "--approve", "call_1")  # the script's retry of its decision
    assert retried.returncode == 2 and "nothing changed" in retried.stderr
    assert not (two / "PWNED").exists() and len(agent.server.requests) == requests
    (other,) = listed(agent)
    assert (other["thread_id"], other["call_id"]) == (second, "call_1")
    assert other["digest"] != seen["digest"]
    assert f"name it call_1@{other['digest']}" in retried.stderr and first in retried.stderr
    assert len(retried.stderr.splitlines()) == 1
    pinned = agent.run("review", "--approve", f"call_1@{seen['digest']}")  # as it was listed
    assert pinned.returncode == 0, pinned.stderr
    assert f"of thread {first} was already decided: approved" in pinned.stderr
    in_first = agent.run("review", "--thread", first, "--approve", "call_1")
    assert in_first.returncode == 0 and "already decided: approved" in in_first.stderr
    assert not (two / "PWNED").exists() and len(agent.server.requests) == requests
    assert names(listed(agent)) == names([other])

    chosen = agent.run("review", "--approve", f"call_1@{other['digest']}")
    assert chosen.returncode == 0, chosen.stderr
    assert (two / "PWNED").exists() and (one / "a.txt").read_text() == "A\n"


def test_a_call_whose_arguments_changed_since_it_was_listed_is_not_approved(
    agent: Agent,
) -> None:
    thread = park(agent, agent.workspace, ("shell", {"command": "echo harmless"}))
    (seen,) = listed(agent)  # the person reads: call_1 = echo harmless
    # meanwhile another client rejects it, and the model proposes call_1 again
    agent.server.restart_call_ids()
    agent.server.push(tool_calls(("shell", {"command": "touch PWNED2"})))
    rejected = agent.run("review", thread, "--reject", "call_1", "--message", "try again")
    assert rejected.returncode == 3, rejected.stderr
    agent.server.push(text("C done."))  # what the model would say if PWNED2 ran
    requests = len(agent.server.requests)

    for where in ([], [thread], ["--thread", thread[:8]]):  # the person approves what they read
        bare = agent.run("review", *where, "--approve", "call_1")
        assert bare.returncode == 2, where
        assert not (agent.workspace / "PWNED2").exists()
    assert len(agent.server.requests) == requests
    (now,) = listed(agent)
    assert (now["call_id"], now["subject"]) == ("call_1", "touch PWNED2")
    assert now["digest"] != seen["digest"] and f"name it call_1@{now['digest']}" in bare.stderr
    approved = agent.run("review", "--approve", f"call_1@{seen['digest']}")  # what was read
    assert approved.returncode == 2
    assert "was already decided: feedback" in approved.stderr
    assert not (agent.workspace / "PWNED2").exists()
    assert len(agent.server.requests) == requests and names(listed(agent)) == names([now])

    refused = agent.run("review", "--reject", f"call_1@{now['digest']}", "--message", "no")
    assert refused.returncode == 0, refused.stderr
    assert not (agent.workspace / "PWNED2").exists() and listed(agent) == []


@pytest.mark.backends
def test_one_review_decides_calls_of_two_threads(agent: Agent) -> None:
    one, two = workspaces(agent)
    first = park(agent, one, ("shell", {"command": "echo one > made.txt"}))
    second = park(agent, two, ("write_file", {"path": "notes.md", "content": "x"}))

    unknown = agent.run("review", "--approve", "call_1", "--approve", "call_9")
    assert unknown.returncode == 2 and "call_9" in unknown.stderr
    assert len(listed(agent)) == 2 and not (one / "made.txt").exists()  # nothing was sent

    agent.server.push(text("Made it."), tool_calls(("shell", {"command": "echo more"})))
    both = agent.run("review", "--approve", "call_1", "--approve", "call_2", "-o", "json")
    assert both.returncode == 3, both.stderr  # the worst: the second thread waits again
    reports = json.loads(both.stdout)
    assert [(r["thread_id"], r["status"]) for r in reports] == [
        (first, "done"),
        (second, "awaiting_approval"),
    ]
    assert reports[0]["final"] == "Made it."
    (again,) = reports[1]["pending"]
    assert (again["call_id"], again["args"]) == ("call_3", {"command": "echo more"})
    assert names(listed(agent)) == [(second, "call_3", again["digest"])]  # run's name for it
    assert (one / "made.txt").read_text() == "one\n" and (two / "notes.md").read_text() == "x"

    agent.server.push(tool_calls(("shell", {"command": "echo three > three.txt"})))
    parked = agent.run("run", "go", "-w", str(one), "-o", "jsonl")
    assert parked.returncode == 3, parked.stderr
    lines = [json.loads(line) for line in parked.stdout.splitlines()]
    done = lines[-1]  # the done event names the call too, and so does the review request
    third, (waiting,) = done["thread_id"], done["pending"]
    [asked] = [e for e in lines if e["type"] == "review_request"]
    assert asked["action_requests"][0]["digest"] == waiting["digest"]
    agent.server.push(error(400, "scripted failure"), text("Three done."))
    named = [f"call_3@{again['digest']}", f"call_4@{waiting['digest']}"]
    mixed = agent.run("review", "--approve", named[0], "--approve", named[1])
    assert mixed.returncode == 1, mixed.stderr  # the worst: an error in the first
    assert "scripted failure" in mixed.stderr and f"thread {second}" in mixed.stderr
    assert "Three done." in mixed.stdout and (one / "three.txt").read_text() == "three\n"
    assert [row["thread_id"] for row in listed(agent)] == []
    statuses = {
        row["thread_id"]: row["status"]
        for row in json.loads(agent.run("threads", "list", "--json").stdout)
    }
    assert statuses[third] == "idle" and statuses[second] != "awaiting_approval"


def test_the_inbox_marks_a_call_cut_off_by_a_crash_and_names_it(agent: Agent) -> None:
    ws: Path = agent.workspace
    thread = killed_mid_call(agent)
    (row,) = listed(agent)
    assert (row["thread_id"], row["call_id"], row["rerun"]) == (thread, "call_1", "started")
    shown = agent.run("review").stdout
    assert f"call_1@{row['digest']}  shell" in shown and "(rerun: started)" in shown

    agent.server.push(text("Its result is unknown."))
    done = agent.run("review", "--done", "call_1")  # its own first approval is no other call
    assert done.returncode == 0, done.stderr
    assert lines(ws / "ran.log") == 1 and listed(agent) == []
    again = agent.run("review", "--done", f"call_1@{row['digest']}")
    assert again.returncode == 0 and "already decided: marked done" in again.stderr
    (ws / "go").touch()
