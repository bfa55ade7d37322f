"""Approval policy through the installed command: config rules, flags, invalid calls."""

from __future__ import annotations

import json

from tests.e2e.conftest import Agent
from tests.helpers.scripted_server import text, tool_calls


def tool_results(agent: Agent, request: int) -> dict[str, str]:
    messages = agent.server.requests[request]["messages"]
    return {m["tool_call_id"]: m["content"] for m in messages if m["role"] == "tool"}


def test_config_allow_list_and_rules_run_without_review(agent: Agent) -> None:
    (agent.workspace / "notes.txt").write_text("milk\n")
    config = agent.workspace / "c.toml"
    config.write_text(
        '[approval]\nallow = ["read_file"]\n\n'
        '[[approval.rules]]\ntool = "shell"\nmatch = "echo *"\ndecision = "allow"\n'
    )
    agent.server.push(
        tool_calls(("read_file", {"path": "notes.txt"}), ("shell", {"command": "echo ok"})),
        tool_calls(("shell", {"command": "echo ok; touch pwned"})),
    )
    result = agent.run("run", "read it", "--config", str(config), "-o", "json")
    assert result.returncode == 3, result.stderr  # the chained command is asked about
    report = json.loads(result.stdout)
    assert [p["args"]["command"] for p in report["pending"]] == ["echo ok; touch pwned"]
    results = tool_results(agent, 1)
    assert "milk" in results["call_1"] and "ok" in results["call_2"]
    assert not (agent.workspace / "pwned").exists()


def test_deny_beats_auto_approve(agent: Agent) -> None:
    agent.server.push(tool_calls(("shell", {"command": "touch x"})), text("Could not."))
    result = agent.run("run", "touch x", "-y", "--deny", "shell")
    assert result.returncode == 0, result.stderr
    assert "denied by flag --deny" in tool_results(agent, 1)["call_1"]
    assert not (agent.workspace / "x").exists()


def test_invalid_arguments_are_corrected_by_the_model_without_a_review(agent: Agent) -> None:
    config = agent.workspace / "c.toml"
    config.write_text("[model]\nstream = false\n")
    agent.server.push(
        tool_calls(("write_file", '{"path": "a.txt", "content": ')),  # malformed JSON
        tool_calls(("write_file", {"path": "a.txt"})),  # missing a required field
        tool_calls(("write_file", {"path": "a.txt", "content": "fixed"})),
    )
    result = agent.run("run", "write a.txt", "--config", str(config), "-o", "json")
    assert result.returncode == 3, result.stderr
    assert [p["call_id"] for p in json.loads(result.stdout)["pending"]] == ["call_3"]
    assert "not valid JSON" in tool_results(agent, 1)["call_1"]
    assert "'content': Field required" in tool_results(agent, 2)["call_2"]
