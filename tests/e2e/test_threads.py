"""Thread commands through the installed CLI: list, show with decisions, export round trip."""

from __future__ import annotations

import json

import pytest
from langchain_core.messages import messages_from_dict

from tests.e2e.conftest import Agent
from tests.helpers.scripted_server import text, tool_calls

pytestmark = pytest.mark.backends  # each test on SQLite and on PostgreSQL


def test_show_and_export_carry_the_audit_trail(agent: Agent) -> None:
    agent.server.push(
        tool_calls(
            ("write_file", {"path": "a.txt", "content": "draft"}), ("read_file", {"path": "a.txt"})
        ),
    )
    parked = agent.run("run", "write then read", "--approve", "read_file", "-o", "json")
    assert parked.returncode == 3, parked.stderr
    thread = json.loads(parked.stdout)["thread_id"]
    agent.server.push(text("Done."))
    edited = agent.run(
        "review", thread[:4], "--edit", "call_1", "--args", '{"path": "a.txt", "content": "final"}'
    )
    assert edited.returncode == 0, edited.stderr

    shown = agent.run("threads", "show", thread)
    assert shown.returncode == 0, shown.stderr
    assert "\x1b[" not in shown.stdout  # piped: plain text
    assert "you: write then read" in shown.stdout and "assistant: Done." in shown.stdout
    assert "edited by person: agentcli review" in shown.stdout
    assert "allowed by flag: flag --approve" in shown.stdout

    exported = agent.run("threads", "export", thread, "--format", "json")
    document = json.loads(exported.stdout)
    assert document["thread"]["thread_id"] == thread
    decisions = {a["call_id"]: (a["decision"], a["who"], a["ran_args"]) for a in document["audit"]}
    assert decisions["call_1"] == ("edited", "person", {"path": "a.txt", "content": "final"})
    assert decisions["call_2"][:2] == ("allowed", "flag")
    messages = messages_from_dict(document["messages"])
    assert [m.type for m in messages] == ["human", "ai", "tool", "tool", "ai"]

    markdown = agent.run("threads", "export", thread).stdout
    assert markdown.startswith("# write then read") and "**Assistant:**\n\n> Done.\n" in markdown

    as_json = json.loads(agent.run("threads", "show", thread, "--json").stdout)
    calls = as_json["entries"][1]["calls"]
    assert [c["decision"]["decision"] for c in calls] == ["edited", "allowed"]


def start(agent: Agent, message: str, *replies) -> str:
    agent.server.push(*replies)
    result = agent.run("run", message, "-o", "json")
    assert result.returncode in (0, 3), result.stderr
    return json.loads(result.stdout)["thread_id"]


def listed(agent: Agent, *args: str) -> list[dict]:
    result = agent.run("threads", "list", "--json", *args)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_list_filters_rename_and_delete_of_a_paused_thread(agent: Agent) -> None:
    done = start(agent, "tell me about otters", text("Otters hold hands while sleeping."))
    paused = start(agent, "make a file", tool_calls(("write_file", {"path": "f", "content": "x"})))
    assert [t["thread_id"] for t in listed(agent)] == [paused, done]
    assert {"thread_id", "title", "status", "updated_at", "messages", "workspace"} <= set(
        listed(agent)[0]
    )
    assert [t["thread_id"] for t in listed(agent, "--status", "awaiting_approval")] == [paused]
    assert [t["thread_id"] for t in listed(agent, "--search", "hold hands")] == [done]  # an answer
    assert [t["thread_id"] for t in listed(agent, "--limit", "1")] == [paused]

    renamed = agent.run("threads", "rename", done[:6], "Otter facts")
    assert renamed.returncode == 0, renamed.stderr
    assert listed(agent, "--search", "Otter facts")[0]["title"] == "Otter facts"

    refused = agent.run("threads", "delete", paused)  # no terminal to ask at
    assert refused.returncode == 2 and "--yes" in refused.stderr
    deleted = agent.run("threads", "delete", paused, "--yes")
    assert deleted.returncode == 0, deleted.stderr
    assert [t["thread_id"] for t in listed(agent)] == [done]
    gone = agent.run("review", paused)
    assert gone.returncode == 2 and "no thread" in gone.stderr


def test_ambiguous_prefix_lists_the_candidates(agent: Agent) -> None:
    store = agent.store()
    store.create("abc111", "one", str(agent.workspace), "scripted")
    store.create("abc222", "two", str(agent.workspace), "scripted")
    store.close()
    result = agent.run("threads", "show", "abc")
    assert result.returncode == 2
    assert "ambiguous" in result.stderr and "abc111" in result.stderr and "abc222" in result.stderr
    assert agent.run("threads", "show", "abc1").returncode == 0


def test_fork_at_a_turn_then_both_threads_go_their_own_way(agent: Agent) -> None:
    original = start(agent, "my name is Ann", text("Hello Ann."))
    agent.server.push(text("Ann likes tea."))
    assert agent.run("run", "I like tea", "--thread", original).returncode == 0

    history = json.loads(agent.run("threads", "history", original, "--json").stdout)
    assert [(h["number"], h["text"]) for h in history] == [(1, "my name is Ann"), (2, "I like tea")]
    forked = agent.run("threads", "fork", original, "--at", "2")
    assert forked.returncode == 0, forked.stderr
    fork = forked.stdout.strip()
    assert fork != original and listed(agent)[0]["thread_id"] == fork

    agent.server.push(text("Coffee then."))
    assert agent.run("run", "I like coffee", "--thread", fork).returncode == 0
    sent = [m["content"] for m in agent.server.requests[-1]["messages"] if m["role"] != "system"]
    assert sent == ["my name is Ann", "Hello Ann.", "I like coffee"]

    agent.server.push(text("Still tea."))
    assert agent.run("run", "what do I like?", "--thread", original).returncode == 0
    sent = [m["content"] for m in agent.server.requests[-1]["messages"] if m["role"] != "system"]
    assert sent == [
        "my name is Ann",
        "Hello Ann.",
        "I like tea",
        "Ann likes tea.",
        "what do I like?",
    ]


def test_fork_of_a_paused_thread_is_decided_independently(agent: Agent) -> None:
    original = start(
        agent, "write f", tool_calls(("write_file", {"path": "f.txt", "content": "A"}))
    )
    fork = agent.run("threads", "fork", original).stdout.strip()
    agent.server.push(text("Rejected, fine."))
    assert agent.run("review", fork, "--reject", "all").returncode == 0
    assert not (agent.workspace / "f.txt").exists()
    agent.server.push(text("Written."))
    assert agent.run("review", original, "--approve", "all").returncode == 0
    assert (agent.workspace / "f.txt").read_text() == "A"
    statuses = {t["thread_id"]: t["status"] for t in listed(agent)}
    assert statuses == {original: "idle", fork: "idle"}


def test_last_picks_the_latest_thread_of_this_workspace(agent: Agent) -> None:
    start(agent, "first thread", text("one"))
    second = start(agent, "second thread", text("two"))
    agent.server.push(text("still the second"))
    result = agent.run("run", "and now?", "--last", "-o", "json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["thread_id"] == second
    elsewhere = agent.run("run", "hi", "--last", "--workspace", str(agent.workspace.parent))
    assert elsewhere.returncode == 2 and "no thread in" in elsewhere.stderr


def test_threads_list_prints_titles_as_they_are(agent: Agent) -> None:
    agent.server.push(text("Done."))
    assert agent.run("run", "fix the [/bold] tag and [red]this[/red]").returncode == 0
    listed = agent.run("threads", "list")
    assert listed.returncode == 0, listed.stderr
    assert "fix the [/bold] tag and [red]this[/red]" in listed.stdout
    header = "id title status msgs updated workspace"
    assert listed.stdout.splitlines()[0].split() == header.split()
