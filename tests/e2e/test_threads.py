"""Thread commands through the installed CLI: list, show with decisions, export round trip."""

from __future__ import annotations

import json

from langchain_core.messages import messages_from_dict

from tests.e2e.conftest import Agent
from tests.scripted_server import text, tool_calls


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
    assert markdown.startswith("# write then read") and "**Assistant:** Done." in markdown

    as_json = json.loads(agent.run("threads", "show", thread, "--json").stdout)
    calls = as_json["entries"][1]["calls"]
    assert [c["decision"]["decision"] for c in calls] == ["edited", "allowed"]
