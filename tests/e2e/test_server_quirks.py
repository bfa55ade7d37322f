"""Real servers' quirks (tests/helpers/server_profiles.py), cut-off answers, request tuning
and visible retries, driven through the installed command."""

from __future__ import annotations

import json
from pathlib import Path

from agentcli.agent.model.storable_calls import UNKEPT
from agentcli.agent.model.token_count import text_tokens
from tests.e2e.conftest import Agent
from tests.helpers.scripted_server import error, text, tool_calls
from tests.helpers.server_profiles import Profile
from tests.helpers.terminal import PROMPT, leave


def events(result) -> list[dict]:
    return [json.loads(line) for line in result.stdout.splitlines() if line.strip()]


def test_a_name_repeated_in_every_delta_is_the_tool_named_once(agent: Agent) -> None:
    agent.server.profile = Profile(repeat_names=True)
    args = {"path": "a.txt", "content": "x" * 40}  # many argument deltas, each with the name
    agent.server.push(tool_calls(("write_file", args)), text("Wrote it."))
    result = agent.run("run", "write", "-y", "-o", "jsonl")
    assert result.returncode == 0, result.stderr
    assert (agent.workspace / "a.txt").read_text() == "x" * 40
    proposed = [e for e in events(result) if e["type"] == "assistant_message"][0]
    assert [c["name"] for c in proposed["tool_calls"]] == ["write_file"]
    assert agent.server.requests[1]["messages"][-2]["tool_calls"][0]["function"]["name"] == (
        "write_file"
    )


def test_calls_without_ids_or_under_one_id_each_run_once_in_order(agent: Agent) -> None:
    """A server that sends no call ids, and one that gives every call the same id: each call
    gets an id of its own, runs once, in the model's order, and is answered by its id."""
    for quirk in ("none", "same"):
        agent.server.profile = Profile(call_ids=quirk)
        log = f"{quirk}.log"
        first = f"sleep 0.3; echo first >> {log}"
        agent.server.push(
            tool_calls(
                ("shell", {"command": first}), ("shell", {"command": f"echo second >> {log}"})
            ),
            text("Both ran."),
        )
        result = agent.run("run", "two", "-y", "-o", "jsonl")
        assert result.returncode == 0, result.stderr
        assert (agent.workspace / log).read_text() == "first\nsecond\n"
        sent = agent.server.requests[-1]["messages"]
        ids = [c["id"] for c in sent[-3]["tool_calls"]]
        assert len(set(ids)) == 2 and all(ids)
        assert [m["tool_call_id"] for m in sent[-2:]] == ids


def test_arguments_agentcli_cannot_keep_go_back_to_the_model(agent: Agent) -> None:
    """JSON allows an integer beyond 64 bits and a lone surrogate; neither can be stored.
    The run goes on: the model is told, nothing runs, the thread is kept."""
    huge = '{"path": "a.txt", "content": "x", "n": 123456789012345678901234567890}'
    lone = '{"path": "b.txt", "content": "\\ud800"}'
    agent.server.push(tool_calls(("write_file", huge), ("write_file", lone)), text("Noted."))
    result = agent.run("run", "write", "-y")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().endswith("Noted.")
    assert not (agent.workspace / "a.txt").exists() and not (agent.workspace / "b.txt").exists()
    told = [m["content"] for m in agent.server.requests[1]["messages"] if m["role"] == "tool"]
    assert len(told) == 2 and all(UNKEPT in t for t in told), told


def test_a_server_refusing_null_content_gets_empty_content_once_detected(agent: Agent) -> None:
    agent.server.profile = Profile(refuse_null_content=True)
    agent.server.push(
        tool_calls(("read_file", {"path": "n.txt"})), text("It says hi."), text("Still fine.")
    )
    (agent.workspace / "n.txt").write_text("hi\n")
    result = agent.run("run", "read n.txt", "-y", "-o", "jsonl")
    assert result.returncode == 0, result.stderr
    assert events(result)[-1]["final"] == "It says hi."
    retries = [e for e in events(result) if e["type"] == "retry"]
    assert len(retries) == 1 and "content" in retries[0]["change"]
    # the refused request, then the same one with "" where null was
    refused, accepted = agent.server.requests[1:3]
    assert refused["messages"][2]["content"] is None
    assert accepted["messages"][2]["content"] == ""
    assert len(agent.server.requests) == 3


def test_a_validation_500_is_not_retried_and_is_one_line(agent: Agent) -> None:
    detail = "3 validation errors:\n" + "\n".join(f"  field {i}: Input should be" for i in range(9))
    agent.server.push(error(500, detail, type_="internal_server_error"))
    result = agent.run("run", "hi")
    assert result.returncode == 1
    assert len(agent.server.requests) == 1  # it would fail the same way again
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("agentcli: error:") and "500" in lines[0]


def test_an_empty_stream_is_asked_again_without_streaming(agent: Agent) -> None:
    agent.server.profile = Profile(empty_stream=True)
    agent.server.push(text("unused: the stream is empty"), text("Plain answer."))
    result = agent.run("run", "hi", "-o", "jsonl")
    assert result.returncode == 0, result.stderr
    assert events(result)[-1]["final"] == "Plain answer."
    assert [r["stream"] for r in agent.server.requests] == [True, False]
    retry = [e for e in events(result) if e["type"] == "retry"][0]
    assert retry["error"] == "the server sent an empty stream" and retry["attempt"] == 2


def test_a_server_that_drops_the_connection_after_an_empty_stream_is_asked_again(
    agent: Agent,
) -> None:
    """llama-cpp-python's server (chatml-function-calling, tool_choice "auto", a call
    chosen) fails a streamed request with an empty stream, then closes that connection as
    the unstreamed request goes out on it. With no retries configured that one-off request
    still gets an answer: it is asked once more on a new connection."""
    configure = Path(agent.env["XDG_CONFIG_HOME"]) / "agentcli" / "config.toml"
    configure.parent.mkdir(parents=True, exist_ok=True)
    configure.write_text("[model]\nmax_retries = 0\n")
    agent.server.profile = Profile(empty_stream=True, drop_after_empty=True)
    agent.server.push(text("unused: the stream is empty"), text("Plain answer."))
    result = agent.run("run", "hi", "-o", "jsonl")
    assert result.returncode == 0, result.stderr
    assert events(result)[-1]["final"] == "Plain answer."
    # the empty stream, the dropped request, the same request again on a new connection
    assert [r["stream"] for r in agent.server.requests] == [True, False, False]
    retries = [e for e in events(result) if e["type"] == "retry"]
    assert [r["change"] for r in retries] == [
        "asking again without streaming",
        "asking again on a new connection",
    ]
    assert "connection" in retries[1]["error"]


def test_usage_is_estimated_and_marked_when_a_stream_has_none(agent: Agent) -> None:
    agent.server.profile = Profile(no_stream_usage=True)
    answer = "Une réponse de quelques mots, ✓. " * 8
    agent.server.push(text(answer))
    result = agent.run("run", "count me", "-o", "json")
    assert result.returncode == 0, result.stderr
    usage = json.loads(result.stdout)["usage"]
    assert usage["estimated"] is True
    # the window's estimate (token_count.py): the cl100k_base tokenizer's count
    assert usage["output_tokens"] == text_tokens(answer) == 65  # 8 x "Une réponse ... ✓. "
    assert usage["output_tokens"] not in (-(-len(answer.encode()) // 4), -(-len(answer) // 4))
    assert usage["input_tokens"] > 0


def test_chat_says_how_usage_was_estimated(agent: Agent) -> None:
    agent.server.profile = Profile(no_stream_usage=True)
    agent.server.push(text("Counted by agentcli."))
    child = agent.spawn("chat")
    child.expect(PROMPT)
    child.sendline("hi")
    child.expect(r"\d+ in · \d+ out \(estimated: cl100k_base tokenizer\)")
    leave(child)


def test_reported_usage_is_not_marked_estimated(agent: Agent) -> None:
    agent.server.push(text("Counted by the server.", usage=(7, 3)))
    usage = json.loads(agent.run("run", "hi", "-o", "json").stdout)["usage"]
    assert usage["input_tokens"] == 7 and "estimated" not in usage


def test_an_answer_cut_at_max_tokens_is_incomplete_and_exits_1(agent: Agent) -> None:
    agent.server.profile = Profile(finish_length=True)
    agent.server.push(text("The answer goes on and on and"))
    result = agent.run("run", "hi", "--max-tokens", "8", "-o", "json")
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    assert report["status"] == "incomplete" and report["final"].endswith("on and")
    assert agent.server.requests[0]["max_tokens"] == 8  # not max_completion_tokens
    assert "max_completion_tokens" not in agent.server.requests[0]


def test_a_cut_off_tool_call_never_runs(agent: Agent) -> None:
    agent.server.profile = Profile(finish_length=True)
    agent.server.push(tool_calls(("shell", '{"command": "touch ran.txt"}')))
    result = agent.run("run", "go", "-y", "-o", "jsonl")
    assert result.returncode == 1
    seen = events(result)
    cut = [e for e in seen if e["type"] == "answer_cut_off"]
    assert cut == [{"type": "answer_cut_off", "reason": "length", "dropped_calls": ["shell"]}]
    assert seen[-1]["type"] == "done" and seen[-1]["status"] == "incomplete"
    assert not (agent.workspace / "ran.txt").exists()
    assert not [e for e in seen if e["type"] == "tool_result"]
    # the thread goes on: the next request carries no call without its result
    agent.server.profile = Profile()
    agent.server.push(text("ok"))
    thread = seen[-1]["thread_id"]
    again = agent.run("run", "--thread", thread, "continue")
    assert again.returncode == 0, again.stderr
    assert all("tool_calls" not in m for m in agent.server.requests[-1]["messages"])


def test_a_server_truncation_is_incomplete_with_a_warning(agent: Agent) -> None:
    agent.server.profile = Profile(truncated_final=True)
    agent.server.push(text("Cut by the server"))
    result = agent.run("run", "hi")
    assert result.returncode == 1
    assert result.stdout.strip() == "Cut by the server"
    warning = [line for line in result.stderr.splitlines() if "cut off" in line]
    assert len(warning) == 1 and "truncated" in warning[0]


def test_a_timeout_is_not_retried_unless_configured(agent: Agent) -> None:
    agent.server.profile = Profile(first_delay=3)
    config = agent.workspace / "c.toml"
    config.write_text("[model]\ntimeout = 1.0\n")
    agent.server.push(text("late"), text("second"))
    failed = agent.run("run", "hi", "--config", str(config))
    assert failed.returncode == 1
    assert "did not answer within 1 s" in failed.stderr
    assert len(agent.server.requests) == 1  # no second request while the first is worked on

    agent.server.profile = Profile(first_delay=3)
    agent.server.requests.clear()
    config.write_text("[model]\ntimeout = 1.0\nretry_timeouts = true\n")
    retried = agent.run("run", "hi", "--config", str(config))
    assert retried.returncode == 0, retried.stderr
    assert len(agent.server.requests) == 2
    assert "did not answer in time; trying again (attempt 2 of 3)" in retried.stderr


def test_request_settings_and_a_models_table_reach_the_server(agent: Agent) -> None:
    config = agent.workspace / "c.toml"
    config.write_text(
        "[model]\ntemperature = 0.5\nmax_tokens = 100\n"
        '[models."scrip*"]\ntool_choice = "required"\nmax_tokens = 50\n'
        '[models."other"]\nmax_tokens = 7\n'
    )
    agent.server.push(text("a"), text("b"))
    assert agent.run("run", "hi", "--config", str(config)).returncode == 0
    sent = agent.server.requests[0]
    assert (sent["temperature"], sent["max_tokens"], sent["tool_choice"]) == (0.5, 50, "required")
    flags = ("--config", str(config), "--max-tokens", "9", "--temperature", "0")
    assert agent.run("run", "hi", *flags).returncode == 0
    sent = agent.server.requests[1]
    assert (sent["temperature"], sent["max_tokens"]) == (0.0, 9)


def test_a_tool_choice_naming_a_tool_forces_it(agent: Agent) -> None:
    config = agent.workspace / "c.toml"
    config.write_text('[model]\ntool_choice = "read_file"\n')
    agent.server.push(text("a"))
    assert agent.run("run", "hi", "--config", str(config)).returncode == 0
    forced = {"type": "function", "function": {"name": "read_file"}}
    assert agent.server.requests[0]["tool_choice"] == forced
    config.write_text('[model]\ntool_choice = "no_such_tool"\n')
    failed = agent.run("run", "hi", "--config", str(config))
    assert failed.returncode == 2 and "no_such_tool" in failed.stderr
    assert len(agent.server.requests) == 1


def test_chat_shows_a_retry_and_a_cut_off_answer_in_one_line_each(agent: Agent) -> None:
    agent.server.profile = Profile(finish_length=True)
    agent.server.push(error(503, "busy"), text("Half of it"))
    child = agent.spawn("chat", "hi")
    child.expect(r"HTTP 503: busy; trying again \(attempt 2 of 3\)\r\n")
    child.expect("Half of it")
    child.expect(r"warning: the answer was cut off: it reached max_tokens[^\r\n]*\r\n")
    leave(child)
