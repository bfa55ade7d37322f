"""agentcli against a real model server (llama-cpp-python, SmolLM2-135M-Instruct): a chat,
a forced tool call, a reviewed call whose result the model reads, and compaction.

A 135M model's words are not checked, only what agentcli did with them: the statuses, the
calls, what was sent back to the model, and that every request fitted the window."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from agentcli.agent.context.compaction import SUMMARISE
from tests.e2e.conftest import Agent
from tests.helpers.terminal import CHOICE, PROMPT
from tests.realmodel.conftest import N_CTX

pytestmark = pytest.mark.realmodel

FORCE = {"tool_choice": {"type": "function", "function": {"name": "calculator"}}}
TIMINGS: dict[str, float] = {}


def timed(name: str, start: float, agent: Agent) -> None:
    TIMINGS[name] = time.monotonic() - start
    print(f"\nTIMING {name}: {TIMINGS[name]:.1f} s")
    kinds = [
        "summary" if r["messages"][0]["content"] == SUMMARISE else "turn"
        for r in agent.server.requests
    ]
    print(f"REQUESTS {list(zip(kinds, agent.server.statuses, agent.server.seconds, strict=False))}")


def run(agent: Agent, *args: str) -> tuple[int, dict]:
    result = agent.run("run", *args, "-o", "json", timeout=600)
    assert result.stdout, result.stderr
    return result.returncode, json.loads(result.stdout)


def test_a_chat_turn(agent: Agent) -> None:
    start = time.monotonic()
    code, out = run(agent, "Say hello in one short sentence.")
    timed("chat turn", start, agent)
    assert code == 0 and out["status"] == "done", out
    assert out["final"].strip()
    assert agent.server.statuses == [200]


def unstreamed(agent: Agent) -> None:
    """Answers not streamed: llama-cpp-python repeats a call's name in every streamed delta
    (`calculatorcalculator...`), which agentcli does not undo yet (issue 16 item 3, another
    branch's)."""
    config = Path(agent.env["XDG_CONFIG_HOME"]) / "agentcli" / "config.toml"
    config.write_text(config.read_text().replace("[model]\n", "[model]\nstream = false\n"))


def test_a_forced_tool_call_is_reviewed(agent: Agent) -> None:
    unstreamed(agent)
    agent.server.once = [FORCE]
    start = time.monotonic()
    code, out = run(agent, "What is 6 * 7? Use the calculator.")
    timed("forced tool call", start, agent)
    assert code == 3 and out["status"] == "awaiting_approval", json.dumps(out)  # for a person
    [pending] = out["pending"]
    assert pending["tool"] == "calculator" and isinstance(pending["args"]["expression"], str)
    print(f"\nCALL {pending['args']}")


def test_an_approved_call_whose_result_the_model_reads(agent: Agent) -> None:
    unstreamed(agent)
    agent.server.once = [FORCE]
    start = time.monotonic()
    child = agent.spawn("chat")
    child.timeout = 300
    child.expect(PROMPT)
    child.sendline("What is 6 * 7? Use the calculator.")
    child.expect("calculator")
    child.expect(CHOICE)
    child.sendline("a")
    child.expect("✓")  # the call ran
    child.expect(PROMPT)
    child.sendline("/exit")
    child.expect(r"agentcli resume (\w+)")
    thread = child.match.group(1)
    child.close()
    timed("approved call and the answer after it", start, agent)
    last = agent.server.requests[-1]["messages"]
    results = [m for m in last if m["role"] == "tool"]
    assert len(results) == 1 and results[0]["content"]  # the result went back to the model
    shown = json.loads(agent.run("threads", "show", thread, "--json").stdout)["entries"]
    [call] = [c for e in shown if e["role"] == "assistant" for c in e["calls"]]
    assert call["decision"]["decision"] == "approved" and call["status"] == "success"
    assert shown[-1]["role"] == "assistant"  # the model answered after reading it
    print(f"\nRESULT {results[0]['content']!r}; ANSWER {shown[-1]['text']!r}")


def long_turns(agent: Agent, count: int, repeat: int = 25) -> str:
    """`count` user messages of about 12 tokens × `repeat` each, on one thread."""
    thread = ""
    for n in range(1, count + 1):
        where = ("--thread", thread) if thread else ()
        said = f"Note {n}: " + "the weather is mild and the river is calm today. " * repeat
        code, out = run(agent, *where, said)
        # max_tokens is small: a rambling answer is cut off (status incomplete, exit 1),
        # which ends the turn as a kept answer; what is tested here is what was sent
        assert (code, out["status"]) in ((0, "done"), (1, "incomplete")), json.dumps(out)
        thread = out["thread_id"]
    return thread


def summaries(agent: Agent) -> list[int]:
    requests = agent.server.requests
    return [i for i, r in enumerate(requests) if r["messages"][0]["content"] == SUMMARISE]


def test_compaction_by_the_configured_window(agent: Agent) -> None:
    config = Path(agent.env["XDG_CONFIG_HOME"]) / "agentcli" / "config.toml"
    config.write_text(config.read_text() + "\n[context]\nreserve = 256\n")
    text = config.read_text().replace("[model]\n", f"[model]\ncontext_window = {N_CTX}\n")
    config.write_text(text)
    start = time.monotonic()
    thread = long_turns(agent, 6)
    timed("6 long turns, window configured", start, agent)
    assert summaries(agent), "the thread outgrew the threshold: it was compacted"
    assert set(agent.server.statuses) == {200}  # never refused: every request fitted
    shown = json.loads(agent.run("threads", "show", thread, "--json").stdout)["entries"]
    assert [e["role"] for e in shown].count("user") == 6
    [summary] = [e for e in shown if e["role"] == "summary"]
    print(f"\nSUMMARY {summary['text']!r}")


def test_compaction_when_the_server_refuses(agent: Agent) -> None:
    """Unstreamed: llama-cpp-python refuses a streamed request that is too long with an empty
    200 stream, not the 400 it gives an unstreamed one (retrying an empty stream unstreamed
    is issue 16 item 3, another branch's)."""
    unstreamed(agent)
    start = time.monotonic()
    # the window is not known: the server's 400 tells it. Five turns of about 480 tokens
    # pass 2,048 however short the model's answers are (the tools and prompt take ~400)
    thread = long_turns(agent, 5, repeat=40)
    timed("5 longer turns, window from the server's refusal", start, agent)
    assert 400 in agent.server.statuses
    refused = agent.server.statuses.index(400)
    assert summaries(agent) and summaries(agent)[0] == refused + 1
    assert agent.server.statuses[refused + 1 :][:2] == [200, 200]  # summary, then the retry
    shown = json.loads(agent.run("threads", "show", thread, "--json").stdout)["entries"]
    assert [e["reason"] for e in shown if e["role"] == "summary"] in (["overflow"], ["threshold"])
