"""Context windows: long threads are compacted to fit, against a server with a small window
that refuses longer requests (400 context_length_exceeded), as real servers do."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentcli.agent.context.compaction import SUMMARISE, SUMMARY_HEADING
from tests.e2e.conftest import Agent
from tests.helpers.scripted_server import Reply, ScriptedServer, request_tokens, text
from tests.helpers.terminal import PROMPT, leave

WINDOW = 4000


@pytest.fixture
def server(request: pytest.FixtureRequest) -> Iterator[ScriptedServer]:
    """The agent's model server, with the window (and whether /props tells it) a test's
    `window` marker asks for."""
    marker = request.node.get_closest_marker("window")
    kwargs = marker.kwargs if marker else {}
    with ScriptedServer(context_window=kwargs.get("size", WINDOW), **kwargs.get("more", {})) as s:
        s.responders.append(summariser)
        yield s


def summariser(body: dict) -> Reply | None:
    """The model's summary: which numbered messages it read, and the summary before."""
    if not is_summary_request(body):
        return None
    read = body["messages"][1]["content"]
    numbers = sorted(set(re.findall(r"\b\d{3}\b", read)))  # the summary before's too
    return text(f"SUMMARY of messages {' '.join(numbers)}")


def configure(agent: Agent, body: str) -> None:
    path = Path(agent.env["XDG_CONFIG_HOME"]) / "agentcli" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body)


def said(n: int) -> str:
    """The nth user message: about 150 tokens, numbered so each can be found again."""
    return f"message {n:03d}: " + " ".join(f"word{n}-{i}" for i in range(140))


def answer(n: int) -> str:
    return f"answer {n:03d}: " + "noted and understood. " * 12


def is_summary_request(body: dict) -> bool:
    return body["messages"][0]["content"] == SUMMARISE


def turns(agent: Agent, count: int) -> str:
    """`count` user messages on one thread, by `run`; the thread's id."""
    thread = ""
    for n in range(1, count + 1):
        agent.server.push(text(answer(n)))
        where = ("--thread", thread) if thread else ()
        result = agent.run("run", *where, said(n), "-o", "json")
        assert result.returncode == 0, result.stderr
        thread = json.loads(result.stdout)["thread_id"]
    return thread


def test_a_long_thread_stays_inside_the_window(agent: Agent) -> None:
    configure(agent, "[context]\nreserve = 256\n")  # the window is asked of /props
    thread = turns(agent, 9)
    sizes = [request_tokens(body) for body in agent.server.requests]
    assert max(sizes) <= WINDOW  # never refused: every request fitted
    summaries = [i for i, body in enumerate(agent.server.requests) if is_summary_request(body)]
    assert summaries, "the thread outgrew the threshold, so it was compacted"
    last = agent.server.requests[-1]["messages"]
    assert SUMMARY_HEADING in last[0]["content"]  # the summary goes with the system prompt
    assert "SUMMARY of messages 001 002" in last[0]["content"]  # each summary takes the last in
    sent = [m["content"] for m in last if m["role"] == "user"]
    assert said(1) not in sent and said(9) in sent  # old turns summarised, recent ones kept
    # what the summariser read: the turns it replaced, word for word
    first = agent.server.requests[summaries[0]]["messages"][1]["content"]
    assert said(1) in first and answer(1) in first
    # tokens per turn stopped growing: the last requests are no bigger than the first
    # compacted one allowed (limit = 0.8 * window - reserve)
    turn_sizes = [
        s for s, b in zip(sizes, agent.server.requests, strict=True) if not is_summary_request(b)
    ]
    assert max(turn_sizes[-4:]) <= 0.8 * WINDOW - 256 + 100

    shown = agent.run("threads", "show", thread, "--json")
    entries = json.loads(shown.stdout)["entries"]
    users = [e["text"] for e in entries if e["role"] == "user"]
    assert users == [said(n) for n in range(1, 10)]  # the thread keeps everything
    marked = [e for e in entries if e["role"] == "summary"]
    assert len(marked) == 1 and marked[0]["reason"] == "threshold"
    assert marked[0]["text"]  # the summary the model wrote
    above = entries.index(marked[0])
    assert marked[0]["replaces"] > 0 and above > 0
    plain = agent.run("threads", "show", thread).stdout
    assert "summary of the" in plain and "(sent to the model instead)" in plain
    assert said(1) in plain.replace("\n", "")


@pytest.mark.parametrize("api", ["vllm", "ollama"])
def test_the_window_vllm_or_ollama_tells_keeps_the_thread_inside_it(agent: Agent, api: str) -> None:
    """The window is asked of the server as vLLM (`max_model_len` in /v1/models) or Ollama
    (`num_ctx` from POST /api/show) tell it: /props is not there, and nothing is configured."""
    agent.server.window_api = api
    configure(agent, "[context]\nreserve = 256\n")
    thread, found = "", []
    for n in range(1, 10):  # until it compacts: the window is what the server told
        if found:
            break
        agent.server.push(text(answer(n)))
        where = ("--thread", thread) if thread else ()
        result = agent.run("run", *where, said(n), "-o", "jsonl")
        assert result.returncode == 0, result.stderr
        events = [json.loads(line) for line in result.stdout.splitlines()]
        thread = events[0]["thread_id"]
        found += [e for e in events if e["type"] == "compacted"]
    assert found and {e["window"] for e in found} == {WINDOW}  # the window the server told
    assert {e["reason"] for e in found} == {"threshold"}  # compacted before, never refused
    assert max(request_tokens(body) for body in agent.server.requests) <= WINDOW


@pytest.mark.window(size=2500, more={"announce_window": False})
def test_a_refused_request_is_compacted_and_tried_once_more(agent: Agent) -> None:
    """No window known: the server's 400 names it; agentcli fits the request to that window
    (the tools' schemas too: context/fixed_part.py), compacting, and asks again."""
    thread = turns(agent, 2)  # too short to be refused yet
    assert not any(is_summary_request(body) for body in agent.server.requests)
    agent.server.push(text("answer 7"))
    before = len(agent.server.requests)
    result = agent.run("run", "--thread", thread, said(7) * 3, "-o", "jsonl")
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    compacted = [e for e in events if e["type"] == "compacted"]
    assert len(compacted) == 1 and compacted[0]["window"] == 2500  # read from the error
    new = agent.server.requests[before:]
    assert request_tokens(new[0]) > 2500  # refused
    assert is_summary_request(new[1])
    assert request_tokens(new[-1]) <= 2500 and "answer 7" in events[-1]["final"]
    assert len(json.dumps(new[-1]["tools"])) < len(json.dumps(new[0]["tools"]))  # terse


@pytest.mark.window(size=2500, more={"announce_window": False})
def test_a_request_that_cannot_fit_fails_in_one_line_without_a_loop(agent: Agent) -> None:
    agent.server.push(text("never sent"))
    result = agent.run("run", said(1) * 40)
    assert result.returncode == 1
    assert "maximum context length is 2500" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    # asked once more with the tools fitted to the window the refusal named, then no
    # more: nothing to summarise
    assert len(agent.server.requests) == 2
    assert len(json.dumps(agent.server.requests[1]["tools"])) < len(
        json.dumps(agent.server.requests[0]["tools"])
    )


@pytest.mark.window(size=2500, more={"announce_window": False})
def test_with_compaction_off_a_refused_request_is_an_error(agent: Agent) -> None:
    configure(agent, "[context]\ncompact = false\n")
    thread = turns(agent, 2)
    before = len(agent.server.requests)
    result = agent.run("run", "--thread", thread, said(7) * 6)  # too long however fitted
    assert result.returncode == 1 and "maximum context length" in result.stderr
    # once more with the tools fitted to the window named, nothing compacted
    assert len(agent.server.requests) == before + 2
    assert not any(is_summary_request(body) for body in agent.server.requests)


@pytest.mark.window(size=100_000, more={"announce_window": False})
def test_compact_in_chat(agent: Agent) -> None:
    agent.server.push(*(text(answer(n)) for n in range(1, 4)))
    child = agent.spawn("chat")
    for n in range(1, 4):
        child.expect(PROMPT)
        child.sendline(said(n))
        child.expect(f"answer {n:03d}")
    child.expect(PROMPT)
    child.sendline("/compact")
    child.expect(r"context compacted: (\d+) older messages summarised")
    assert int(child.match.group(1)) > 0
    assert is_summary_request(agent.server.requests[-1])
    agent.server.push(text("answer 004"))
    child.expect(PROMPT)
    child.sendline("what did I say first?")
    child.expect("answer 004")
    thread = leave(child)
    system = agent.server.requests[-1]["messages"][0]["content"]
    assert "SUMMARY of messages 001" in system
    shown = json.loads(agent.run("threads", "show", thread, "--json").stdout)["entries"]
    assert [e["reason"] for e in shown if e["role"] == "summary"] == ["command"]
    assert len([e for e in shown if e["role"] == "user"]) == 4
