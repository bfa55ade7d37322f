"""Undo as a person meets it in the first hour (issue 27, bug 10): it says what it will do
before asking and what it did after; each undo's fork has a title of its own; `audit
suggest` counts a decision once however many forks copied it; and a command that wrote
outside the workspace, unconfined, is named, since undo cannot take that back."""

from __future__ import annotations

import json
import re

import pexpect

from tests.e2e.conftest import Agent
from tests.helpers.scripted_server import text, tool_calls
from tests.helpers.terminal import PROMPT

NOTES = "notes.txt"


def write_notes(agent: Agent, content: str, thread: str = "") -> str:
    agent.server.push(tool_calls(("write_file", {"path": NOTES, "content": content})), text("ok"))
    more = ["--thread", thread] if thread else []
    done = agent.run("run", f"write {NOTES}", "--approve", "write_file", "-o", "json", *more)
    assert done.returncode == 0, done.stderr
    return str(json.loads(done.stdout)["thread_id"])


def test_undo_says_restored_only_once_it_has_restored(agent: Agent) -> None:
    (agent.workspace / NOTES).write_text("mine\n")
    thread = write_notes(agent, "the agent's\n")
    child = agent.spawn("undo", thread)
    child.expect(r"Undo\? \[y/N\]")
    asked = child.before
    assert f"files to restore (1): {NOTES}" in asked
    assert "restored" not in asked  # nothing is, yet
    child.sendline("n")
    child.expect(pexpect.EOF)
    refused = child.before
    child.close()
    assert child.exitstatus == 1
    assert "restored" not in refused
    assert (agent.workspace / NOTES).read_text() == "the agent's\n"

    child = agent.spawn("undo", thread)
    child.expect(r"Undo\? \[y/N\]")
    child.sendline("y")
    child.expect(f"files restored \\(1\\): {NOTES}")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert (agent.workspace / NOTES).read_text() == "mine\n"


def test_each_undo_in_chat_makes_a_fork_with_a_title_of_its_own(agent: Agent) -> None:
    child = agent.spawn("chat", "--approve", "write_file")
    forks = []
    for round_ in range(1, 4):
        agent.server.push(
            tool_calls(("write_file", {"path": NOTES, "content": f"round {round_}\n"})),
            text(f"Wrote round {round_}."),
        )
        child.expect(PROMPT)
        child.sendline(f"write {NOTES}")
        child.expect(f"Wrote round {round_}.")
        child.expect(PROMPT)
        child.sendline("/undo")
        child.expect(r"undone: now on ([0-9a-f-]{36})")
        forks.append(child.match.group(1))
    child.expect(PROMPT)
    child.sendline("/exit")
    child.expect(pexpect.EOF)
    child.close()
    rows = json.loads(agent.run("threads", "list", "--json").stdout)
    titles = {row["thread_id"]: row["title"] for row in rows}
    assert [titles[fork] for fork in forks] == [
        f"write {NOTES} (undo 1)",
        f"write {NOTES} (undo 2)",
        f"write {NOTES} (undo 3)",
    ]
    assert len(set(titles.values())) == len(titles) == 4  # and the thread undone first


def test_audit_suggest_counts_a_decision_once_not_its_copies_in_forks(agent: Agent) -> None:
    thread = ""
    for _ in range(2):  # the person approves `ls` by hand, twice
        agent.server.push(tool_calls(("shell", {"command": "ls"})), text("listed"))
        more = ["--thread", thread] if thread else []
        parked = agent.run("run", "list the files", "-o", "json", *more)
        assert parked.returncode == 3, parked.stderr
        thread = json.loads(parked.stdout)["thread_id"]
        assert agent.run("review", thread, "--approve", "all").returncode == 0
    for _ in range(2):  # two forks copy both decisions, two undos the first one
        assert agent.run("threads", "fork", thread).returncode == 0
        assert agent.run("undo", thread, "--yes").returncode == 0
    listed = json.loads(agent.run("audit", "--json").stdout)
    assert len([entry for entry in listed if entry["tool"] == "shell"]) == 8  # with copies
    suggested = agent.run("audit", "suggest", "--min", "2")
    assert suggested.returncode == 0, suggested.stderr
    assert re.findall(r"approved by hand (\d+) times", suggested.stdout) == ["2"]
    assert "nothing to suggest" in agent.run("audit", "suggest").stdout  # 2 < 3


def test_undo_names_what_an_unconfined_command_wrote_outside_the_workspace(
    agent: Agent,
) -> None:
    outside = agent.workspace.parent / "outside.txt"
    command = "printf x > ../outside.txt"
    agent.server.push(tool_calls(("shell", {"command": command})), text("Written."))
    parked = json.loads(agent.run("run", "write outside", "-o", "json").stdout)
    thread = parked["thread_id"]
    decided = agent.run("review", thread, "--unconfined", "call_1")  # "unconfined once"
    assert decided.returncode == 0, decided.stderr
    assert outside.read_text() == "x"

    told = agent.run("undo", thread, "--yes")
    assert told.returncode == 0, told.stderr
    said = [line for line in told.stderr.splitlines() if "outside the sandbox" in line]
    assert said == [
        "ran outside the sandbox, so what it changed outside the workspace is not restored:"
        f" shell {command} (outside the workspace it names ../outside.txt)"
    ], told.stderr

    child = agent.spawn("resume", thread)
    child.expect(PROMPT)
    child.sendline("/undo")
    child.expect(r"ran outside the sandbox, so what it changed outside the workspace is not")
    child.expect(r"\.\./outside\.txt\)")
    child.expect(r"undone: now on")
    child.expect(PROMPT)
    child.sendline("/exit")
    child.expect(pexpect.EOF)
    child.close()
    assert outside.read_text() == "x"  # said, and left as it is
