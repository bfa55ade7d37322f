"""`agentcli run` and `agentcli review`: scripted runs, parking, continuing, output formats."""

from __future__ import annotations

import json

import pytest

from agentcli.session.call_digests import digest
from tests.e2e.conftest import Agent
from tests.helpers.scripted_server import text, tool_calls


def thread_of(result) -> str:
    return json.loads(result.stdout)["thread_id"]


def test_run_auto_approve_writes_the_file_and_prints_the_answer(agent: Agent) -> None:
    agent.server.push(
        tool_calls(("write_file", {"path": "a.txt", "content": "hello\n"})), text("Wrote a.txt.")
    )
    result = agent.run("run", "write hello to a.txt", "--auto-approve")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "Wrote a.txt."
    assert (agent.workspace / "a.txt").read_text() == "hello\n"
    sent = agent.server.requests[1]["messages"]
    assert sent[-1]["role"] == "tool" and sent[-1]["tool_call_id"] == "call_1"
    assert agent.server.requests[0]["stream"] is True


@pytest.mark.backends
def test_run_parks_with_exit_3_and_run_thread_auto_approve_finishes(agent: Agent) -> None:
    agent.server.push(tool_calls(("shell", {"command": "echo hi > out.txt"})))
    parked = agent.run("run", "make out.txt", "--output", "json")
    assert parked.returncode == 3, parked.stderr
    result = json.loads(parked.stdout)
    assert result["status"] == "awaiting_approval"
    args = {"command": "echo hi > out.txt"}
    named = digest(result["thread_id"], "call_1", 0, "shell", args)  # what review names it by
    assert result["pending"] == [
        {
            "call_id": "call_1",
            "digest": named,
            "tool": "shell",
            "args": args,
            # every shell call: what no snapshot keeps (here, no such file to name)
            "undo": "changes to ignored files, files over 10 MB and files inside .git folders"
            " are not kept",
        }
    ]
    assert not (agent.workspace / "out.txt").exists()

    still = agent.run("run", "--thread", result["thread_id"])  # no policy allows it: still parked
    assert still.returncode == 3 and "call_1" in still.stderr

    agent.server.push(text("Done."))
    finished = agent.run("run", "--thread", result["thread_id"][:5], "--auto-approve", "-o", "json")
    assert finished.returncode == 0, finished.stderr
    assert json.loads(finished.stdout)["status"] == "done"
    assert (agent.workspace / "out.txt").read_text() == "hi\n"
    listed = json.loads(agent.run("threads", "list", "--json").stdout)
    assert [(t["thread_id"], t["status"]) for t in listed] == [(result["thread_id"], "idle")]


def test_approve_flag_allows_one_tool_and_deny_tells_the_model(agent: Agent) -> None:
    (agent.workspace / "notes.txt").write_text("remember the milk\n")
    agent.server.push(
        tool_calls(("read_file", {"path": "notes.txt"}), ("shell", {"command": "rm notes.txt"})),
        text("I read it; the shell was denied."),
    )
    result = agent.run(
        "run", "read notes", "--approve", "read_file", "--deny", "shell", "-o", "json"
    )
    assert result.returncode == 0, result.stderr
    tool_messages = {
        m["tool_call_id"]: m["content"]
        for m in agent.server.requests[1]["messages"]
        if m["role"] == "tool"
    }
    assert "remember the milk" in tool_messages["call_1"]
    assert "denied by flag --deny" in tool_messages["call_2"]
    assert (agent.workspace / "notes.txt").exists()


@pytest.mark.backends
def test_history_is_carried_across_processes(agent: Agent) -> None:
    agent.server.push(text("Nice to meet you, Ann."), text("Your name is Ann."))
    first = agent.run("run", "My name is Ann.", "-o", "json")
    second = agent.run("run", "What is my name?", "--thread", thread_of(first), "-o", "json")
    assert second.returncode == 0, second.stderr
    assert json.loads(second.stdout)["final"] == "Your name is Ann."
    contents = [m.get("content") for m in agent.server.requests[1]["messages"]]
    assert contents[-3:] == ["My name is Ann.", "Nice to meet you, Ann.", "What is my name?"]


def test_message_from_stdin_and_jsonl_events(agent: Agent) -> None:
    agent.server.push(tool_calls(("calculator", {"expression": "6*7"})), text("42"))
    result = agent.run("run", "-", "-y", "--output", "jsonl", stdin="what is 6*7?\n")
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    types = [e["type"] for e in events]
    assert types[0] == "start" and types.count("start") == 1  # the thread, before anything
    assert events[0] == {"type": "start", "thread_id": events[-1]["thread_id"], "new": True}
    assert types[1] in ("text_delta", "call_progress", "assistant_message")
    progress = next(e for e in events if e["type"] == "call_progress")  # the call as it streams
    assert (progress["index"], progress["name"]) == (0, "calculator")
    assert "tool_result" in types and types[-1] == "done"
    assert next(e for e in events if e["type"] == "tool_result")["content"] == "42"
    assert events[-1]["final"] == "42" and events[-1]["usage"]["total_tokens"] == 30
    assert agent.server.requests[0]["messages"][-1]["content"] == "what is 6*7?\n"


def test_non_streamed_responses_work_too(agent: Agent) -> None:
    config = agent.workspace / "agentcli.toml"
    config.write_text("[model]\nstream = false\n")
    agent.server.push(tool_calls(("list_dir", {})), text("An empty folder."))
    result = agent.run("run", "what is here?", "-y", "--config", str(config))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "An empty folder."
    assert not agent.server.requests[0].get("stream")


@pytest.mark.backends
def test_review_lists_and_rejects_with_a_message(agent: Agent) -> None:
    agent.server.push(
        tool_calls(("write_file", {"path": "x.txt", "content": "x"}), ("shell", {"command": "ls"}))
    )
    thread = thread_of(agent.run("run", "go", "-o", "json"))
    listed = agent.run("review", thread, "--json")
    assert [p["call_id"] for p in json.loads(listed.stdout)] == ["call_1", "call_2"]

    missing = agent.run("review", thread, "--approve", "call_2")
    assert missing.returncode == 2 and "call_1 has no decision" in missing.stderr

    agent.server.push(text("OK, I will not write it."))
    decided = agent.run(
        "review", thread, "--reject", "call_1", "--message", "not that file", "--approve", "call_2"
    )
    assert decided.returncode == 0, decided.stderr
    assert decided.stdout.strip() == "OK, I will not write it."
    tool_messages = {
        m["tool_call_id"]: m["content"]
        for m in agent.server.requests[1]["messages"]
        if m["role"] == "tool"
    }
    assert tool_messages["call_1"] == "not that file"
    assert (
        "exit code: 0" in tool_messages["call_2"].lower()
        or "exit" in tool_messages["call_2"].lower()
    )
    assert not (agent.workspace / "x.txt").exists()


@pytest.mark.backends
def test_review_edit_runs_the_edited_arguments(agent: Agent) -> None:
    agent.server.push(tool_calls(("write_file", {"path": "x.txt", "content": "draft"})))
    thread = thread_of(agent.run("run", "go", "-o", "json"))
    bad = agent.run("review", thread, "--edit", "call_1", "--args", '{"path": "x.txt"}')
    assert bad.returncode == 2 and "content" in bad.stderr
    agent.server.push(text("Written."))
    good = agent.run(
        "review", thread, "--edit", "call_1", "--args", '{"path": "x.txt", "content": "final"}'
    )
    assert good.returncode == 0, good.stderr
    assert (agent.workspace / "x.txt").read_text() == "final"


def test_json_usage_carries_the_cost_when_the_model_is_priced(agent: Agent) -> None:
    config = agent.workspace / "c.toml"
    config.write_text('[model.prices."scripted"]\ninput = 2.0\noutput = 4.0\n')
    agent.server.push(text("cheap", usage=(1000, 500)))
    result = agent.run("run", "hi", "--config", str(config), "-o", "json")
    usage = json.loads(result.stdout)["usage"]
    assert usage["input_tokens"] == 1000 and usage["output_tokens"] == 500
    assert usage["cost_usd"] == 0.004


def test_jsonl_streams_shell_output_while_it_runs(agent: Agent) -> None:
    agent.server.push(
        tool_calls(("shell", {"command": "echo first; sleep 0.3; echo second"})), text("ok")
    )
    result = agent.run("run", "go", "-y", "-o", "jsonl")
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    live = [e for e in events if e["type"] == "tool_output"]
    assert live and all(e["call_id"] == "call_1" for e in live)
    assert "".join(e["text"] for e in live) == "first\nsecond\n"
    kinds = [e["type"] for e in events]
    assert kinds.index("tool_output") < kinds.index("tool_result")
