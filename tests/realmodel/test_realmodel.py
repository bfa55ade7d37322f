"""agentcli against a real model server (llama-cpp-python, SmolLM2-135M-Instruct): a chat,
a forced tool call, a reviewed call whose result the model reads, and compaction.

Streamed as users stream, configured only by agentcli's settings; whatever the server does
differently from OpenAI's (no usage when streaming, a tool name repeated in every delta, a
refusal of `content: null`, an empty stream) is agentcli's to handle. A 135M model's words
are hardly checked, only what agentcli did with them: the statuses, the calls, what was sent
to the model, and that every request fitted the window. Each test prints what the server
sent (REQUESTS) and how long it took (TIMING), for bench/README.md."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import pytest

from agentcli.agent.context.compaction import SUMMARISE
from tests.e2e.conftest import Agent
from tests.helpers.terminal import CHOICE, PROMPT
from tests.realmodel.conftest import MAX_TOKENS, N_CTX, configure

pytestmark = pytest.mark.realmodel

FORCED = {"type": "function", "function": {"name": "calculator"}}


def timed(name: str, start: float, agent: Agent) -> None:
    print(f"\nTIMING {name}: {time.monotonic() - start:.1f} s")
    for body, seen in zip(agent.server.requests, agent.server.seen, strict=False):  # type: ignore[attr-defined]
        kind = "summary" if body["messages"][0]["content"] == SUMMARISE else "turn"
        streamed = "streamed" if body.get("stream") else "unstreamed"
        print(f"REQUEST {kind}, {streamed}: {seen.status}, {seen.seconds} s, {seen.quirks()}")


def tuned(agent: Agent) -> None:
    """Every request carried this model's settings ([models."smollm2"]); a summary, its own
    limit (the summary's share of the window)."""
    for body in agent.server.requests:
        summary = body["messages"][0]["content"] == SUMMARISE
        assert body["temperature"] == 0.0, body
        assert body["max_tokens"] == MAX_TOKENS or summary and body["max_tokens"] < N_CTX, body


def run(agent: Agent, *args: str) -> tuple[int, list[dict[str, Any]]]:
    result = agent.run(*args, "-o", "jsonl", timeout=900)
    assert result.stdout, result.stderr
    return result.returncode, [json.loads(line) for line in result.stdout.splitlines()]


@pytest.mark.llama("template")
def test_a_chat_turn(agent: Agent) -> None:
    start = time.monotonic()
    code, events = run(agent, "run", "Say hello in one short sentence.")
    timed("chat turn", start, agent)
    done = events[-1]
    assert code == 0 and done["status"] == "done", done
    assert done["final"].strip()
    [sent] = agent.server.requests
    assert sent["stream"] is True
    tuned(agent)
    [seen] = agent.server.seen  # type: ignore[attr-defined]
    assert seen.status == 200 and seen.chunks
    # a server that sends no usage when streaming: agentcli's estimate, marked
    assert done["usage"]["input_tokens"] > 0
    assert done["usage"].get("estimated") is (not seen.usage)
    print(f"\nANSWER {done['final']!r}; USAGE {done['usage']}")


@pytest.mark.llama("functions")
def test_a_forced_tool_call_is_reviewed_and_its_result_sent_back(agent: Agent) -> None:
    """`[model] tool_choice = "calculator"`: llama-cpp-python's chatml-function-calling
    makes that call (it ignores `tools` without a tool_choice). Its chat template drops
    tool results (it renders no role "tool"), so the model cannot read one: this test
    checks what agentcli sends back, and the next test has a model read a result."""
    configure(agent, model='tool_choice = "calculator"')
    start = time.monotonic()
    code, events = run(agent, "run", "What is 6 * 7? Use the calculator.")
    timed("forced tool call", start, agent)
    assert code == 3 and events[-1]["status"] == "awaiting_approval", events[-1]
    [pending] = events[-1]["pending"]
    assert pending["name"] == "calculator", pending  # once, however often the server said it
    assert isinstance(pending["args"]["expression"], str)
    [sent] = agent.server.requests
    assert sent["stream"] is True and sent["tool_choice"] == FORCED
    print(f"\nCALL {pending['args']}")

    thread = events[0]["thread_id"]
    start = time.monotonic()
    code, events = run(agent, "review", thread, "--approve", "all")
    timed("approved, the result sent back", start, agent)
    tuned(agent)
    retries = [e for e in events if e["type"] == "retry"]
    results = [e for e in events if e["type"] == "tool_result"]
    assert results and results[0]["status"] == "success", events
    # whatever the server did with the assistant message's `content: null`, the result went
    # back: the request after the call carries it, and it was answered
    after = [body for body in agent.server.requests[1:] if body["messages"][-1]["role"] == "tool"]
    assert after and after[-1]["messages"][-1]["content"] == results[0]["content"], after
    assert agent.server.seen[-1].status == 200  # type: ignore[attr-defined]
    assert code in (0, 1, 3), events[-1]  # done, cut off, or (forced again) another call
    print(f"\nRETRIES {[(r['error'][:80], r.get('change')) for r in retries]}")
    print(f"THEN {events[-1]['status']}")


@pytest.mark.llama("functions")
def test_tool_choice_auto_is_asked_again_without_streaming(
    agent: Agent, llama: Callable[[str], str]
) -> None:
    """`tool_choice = "auto"` on chatml-function-calling: when the model picks a call, the
    server cannot stream it ("Automatic streaming tool choice is not supported") and sends
    an empty 200 stream, then closes that keep-alive connection as the next request goes out
    on it. agentcli asks again without streaming, once more on a new connection if need be.
    Straight at the server, not through the proxy (which opens a connection a request, so
    the closing is not passed on); three runs, as the closing races the next request."""
    configure(agent, model='tool_choice = "auto"')
    agent.env["OPENAI_BASE_URL"] = llama("functions") + "/v1"
    changes = []
    start = time.monotonic()
    for _ in range(3):
        code, events = run(agent, "run", "What is 6 * 7? Use the calculator.")
        assert code == 3 and events[-1]["status"] == "awaiting_approval", events[-1]
        assert [p["name"] for p in events[-1]["pending"]] == ["calculator"]
        changes.append([e["change"] for e in events if e["type"] == "retry"])
        assert changes[-1][0] == "asking again without streaming", changes
    print(f"\nTIMING tool_choice auto, 3 runs: {time.monotonic() - start:.1f} s")
    print(f"RETRIES {changes}")


@pytest.mark.llama("template")
def test_an_approved_call_whose_result_the_model_reads(agent: Agent) -> None:
    """`[model] tool_calls = "text"`, for a model with no tool calling: the tools are described
    in the system prompt, the model writes a `<tool_call>` block, agentcli recovers it and a
    person approves it in chat; the result goes back in a user message, which this server's
    template shows the model. 42 is in no message before the result: the model's answer
    having it is the model reading the result."""
    configure(agent, model='tool_calls = "text"')
    ask = (
        "Use the calculator for 6 * 7. Answer with only this line: "
        '<tool_call>{"name": "calculator", "arguments": {"expression": "6 * 7"}}</tool_call>'
    )
    start = time.monotonic()
    child = agent.spawn("chat")
    child.timeout = 600
    child.expect("you>")
    child.sendline(ask)
    child.expect("calculator")
    child.expect(CHOICE)
    child.sendline("a")
    child.expect("✓")  # the call ran
    child.expect(PROMPT)
    child.sendline("/exit")
    child.expect(r"agentcli resume (\w+)")
    thread = child.match.group(1)
    child.close()
    timed("text call approved in chat, and the answer after it", start, agent)
    tuned(agent)
    assert all("tools" not in body for body in agent.server.requests)  # text mode: none sent
    last = agent.server.requests[-1]["messages"]
    assert "<tool_response" in last[-1]["content"] and "42" in last[-1]["content"]
    shown = json.loads(agent.run("threads", "show", thread, "--json").stdout)["entries"]
    [call] = [c for e in shown if e["role"] == "assistant" for c in e["calls"]]
    assert call["decision"]["decision"] == "approved" and call["status"] == "success"
    answer = shown[-1]
    assert answer["role"] == "assistant" and "42" in answer["text"], answer
    print(f"\nANSWER {answer['text']!r}")


def long_turns(agent: Agent, count: int, repeat: int = 25) -> str:
    """`count` user messages of about 12 tokens × `repeat` each, on one thread."""
    thread = ""
    for n in range(1, count + 1):
        where = ("--thread", thread) if thread else ()
        said = f"Note {n}: " + "the weather is mild and the river is calm today. " * repeat
        code, events = run(agent, "run", *where, said)
        # max_tokens is small: a rambling answer is cut off (status incomplete, exit 1),
        # which ends the turn as a kept answer; what is tested here is what was sent
        assert (code, events[-1]["status"]) in ((0, "done"), (1, "incomplete")), events[-1]
        thread = events[0]["thread_id"]
    tuned(agent)
    return thread


def summaries(agent: Agent) -> list[int]:
    requests = agent.server.requests
    return [i for i, r in enumerate(requests) if r["messages"][0]["content"] == SUMMARISE]


@pytest.mark.llama("template")
def test_compaction_by_the_configured_window(agent: Agent) -> None:
    configure(agent, model=f"context_window = {N_CTX}", more="\n[context]\nreserve = 256\n")
    start = time.monotonic()
    thread = long_turns(agent, 6)
    timed("6 long turns, window configured", start, agent)
    assert summaries(agent), "the thread outgrew the threshold: it was compacted"
    assert set(agent.server.statuses) == {200}  # type: ignore[attr-defined]  # all fitted
    shown = json.loads(agent.run("threads", "show", thread, "--json").stdout)["entries"]
    assert [e["role"] for e in shown].count("user") == 6
    [summary] = [e for e in shown if e["role"] == "summary"]
    print(f"\nSUMMARY {summary['text']!r}")


@pytest.mark.llama("template")
def test_compaction_when_the_server_refuses(agent: Agent) -> None:
    """The window is not known (llama-cpp-python's server does not say it): the server's
    refusal tells it. Streamed, that refusal is an empty 200 stream; unstreamed, a 400
    `context_length_exceeded`, which agentcli compacts on and asks again."""
    start = time.monotonic()
    # five turns of about 480 tokens pass 2,048 however short the model's answers are
    thread = long_turns(agent, 5, repeat=40)
    timed("5 longer turns, window from the server's refusal", start, agent)
    statuses = agent.server.statuses  # type: ignore[attr-defined]
    assert 400 in statuses
    refused = statuses.index(400)
    assert summaries(agent) and summaries(agent)[0] == refused + 1
    assert statuses[refused + 1 :][:2] == [200, 200]  # the summary, then the request again
    shown = json.loads(agent.run("threads", "show", thread, "--json").stdout)["entries"]
    assert [e["reason"] for e in shown if e["role"] == "summary"] in (["overflow"], ["threshold"])


@pytest.mark.llama("template")
def test_a_20_turn_tool_thread_in_a_2048_window(agent: Agent) -> None:
    """Issue 29's goal: `context_window = 2048`, text tool calls (this server knows no tools),
    20 turns each asking for the calculator, calls approved: no request over the window
    (the server would refuse it: 400, or an empty stream then 400), whatever the model says.
    The fixed part is what fits (CONFIG enables the calculator alone)."""
    configure(agent, model=f'tool_calls = "text"\ncontext_window = {N_CTX}')
    start = time.monotonic()
    thread, calls = "", 0
    for n in range(1, 21):
        where = ("--thread", thread) if thread else ()
        ask = (
            f"Turn {n}: use the calculator for {n} * 7. Answer with only this line: "
            f'<tool_call>{{"name": "calculator", "arguments": {{"expression": "{n} * 7"}}}}'
            "</tool_call>"
        )
        code, events = run(agent, "run", *where, ask, "--approve", "calculator")
        assert (code, events[-1]["status"]) in ((0, "done"), (1, "incomplete")), events[-1]
        thread = events[0]["thread_id"]
        calls += sum(e["type"] == "tool_result" for e in events)
    timed("20 tool turns, 2,048 window", start, agent)
    statuses = agent.server.statuses  # type: ignore[attr-defined]
    assert set(statuses) == {200}, statuses  # nothing refused: every request fitted
    seen = agent.server.seen  # type: ignore[attr-defined]
    sizes = [s.prompt_tokens for s in seen if s.prompt_tokens is not None]
    print(f"\nCALLS {calls}; REQUESTS {len(statuses)}; SUMMARIES {len(summaries(agent))}")
    print(f"PROMPT TOKENS (server's count, where reported) max {max(sizes or [0])}: {sizes}")


@pytest.mark.llama("functions")
def test_doctor_probe_finds_the_tool_choice_this_server_needs(agent: Agent) -> None:
    """chatml-function-calling ignores `tools` without `tool_choice`: the probe says so."""
    result = agent.run("doctor", "--probe", timeout=900)
    line = next(line for line in result.stdout.splitlines() if " tool calls:" in line)
    window = next(line for line in result.stdout.splitlines() if " context window:" in line)
    print(f"\nPROBE {line}\nWINDOW {window}")
    assert "tools: no call" in line and "tool_choice naming the tool: a structured call" in line
    assert "none found" in window  # llama-cpp-python's server does not say its window


@pytest.mark.llama("llama-server")
def test_llama_server_calls_a_tool_and_tells_its_window(agent: Agent) -> None:
    result = agent.run("doctor", "--probe", timeout=900)
    print(f"\nDOCTOR {result.stdout}")
    assert f"context window: {N_CTX:,} tokens (the server says)" in result.stdout
    configure(agent, model='tool_choice = "calculator"')
    code, events = run(agent, "run", "What is 6 * 7? Use the calculator.")
    timed("llama-server forced call", time.monotonic(), agent)
    assert code == 3 and events[-1]["pending"][0]["name"] == "calculator", events[-1]
    assert not events[-1]["usage"].get("estimated")  # llama-server streams its usage
