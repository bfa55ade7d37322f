"""agentcli against llama.cpp's own server, as the scripted server's llama-server profile
plays it (tests/helpers/server_profiles.py: its README and source, item 7 of issue 29),
through the installed command: --jinja tool calls streamed, the usage it streams read (not
estimated), the window learnt from /props, its overflow refusal compacted on, and without
--jinja, `doctor --probe` saying what to set."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.e2e.conftest import Agent
from tests.e2e.test_context import configure, summariser
from tests.e2e.test_doctor_probe import refuses_tools
from tests.helpers.scripted_server import ScriptedServer, text, tool_calls
from tests.helpers.server_profiles import LLAMA_SERVER, llama_server
from tests.helpers.template_tokens import cl100k
from tests.helpers.terminal import doctor_line


@pytest.fixture
def server(request: pytest.FixtureRequest) -> Iterator[ScriptedServer]:
    marker = request.node.get_closest_marker("window")
    size = marker.args[0] if marker else 8192
    with ScriptedServer(context_window=size, count=cl100k) as s:
        s.profile = LLAMA_SERVER
        s.responders.append(summariser)
        yield s


def events(result) -> list[dict]:
    return [json.loads(line) for line in result.stdout.splitlines() if line.strip()]


def test_a_tool_call_streamed_as_llama_server_streams_it(agent: Agent) -> None:
    (agent.workspace / "a.txt").write_text("hello\n")
    agent.server.push(tool_calls(("read_file", {"path": "a.txt"})), text("It says hello."))
    result = agent.run("run", "read a.txt", "--approve", "read_file", "-o", "jsonl")
    assert result.returncode == 0, result.stderr
    done = events(result)[-1]
    assert done["status"] == "done" and done["final"] == "It says hello."
    results = [e for e in events(result) if e["type"] == "tool_result"]
    assert results and results[0]["status"] == "success"
    first = agent.server.requests[0]
    assert first["stream"] is True and first["stream_options"] == {"include_usage": True}
    # the usage the server streamed (its count, with `timings` beside it) is the one kept
    assert not done["usage"].get("estimated"), done["usage"]
    assert done["usage"]["input_tokens"] >= sum(b["_counted"] for b in agent.server.requests)


@pytest.mark.window(2048)
def test_the_window_from_props_and_the_overflow_refusal(agent: Agent) -> None:
    """/props tells 2,048. Configured bigger than that (8,192), agentcli sends a turn the
    server refuses in llama.cpp's words (exceed_context_size_error, with n_ctx): it asks
    again fitted to the window the refusal names (fewer tools, tersely described; the thread
    compacted when it no longer fits), and every run succeeds."""
    result = agent.run("doctor")
    assert "context window: 2,048 tokens (the server says)" in result.stdout
    configure(agent, "[model]\ncontext_window = 8192\n")
    thread = ""
    for n in range(1, 6):
        agent.server.push(text(f"answer {n}"))
        where = ("--thread", thread) if thread else ()
        said = f"message {n:03d}: " + " ".join(f"word{n}-{i}" for i in range(260))
        ran = agent.run("run", *where, said, "-o", "json")
        assert ran.returncode == 0, ran.stdout + ran.stderr
        thread = json.loads(ran.stdout)["thread_id"]
    sizes = [b["_counted"] for b in agent.server.requests]
    refused = [i for i, size in enumerate(sizes) if size > 2048]
    # refused at most once a run (what a refusal teaches lasts the process), and each time
    # the same turn asked again (after a summary if the thread no longer fits), fitted to
    # the window it named
    assert 1 <= len(refused) <= 5, sizes
    requests = agent.server.requests
    for i in refused:
        j = next(j for j in range(i + 1, len(requests)) if "tools" in requests[j])
        assert requests[j]["messages"][-1] == requests[i]["messages"][-1]
        assert len(requests[j]["tools"]) < len(requests[i]["tools"]) and sizes[j] <= 2048
    # and the thread, outgrowing the window, was compacted to fit it
    assert any(b["messages"][0]["content"].startswith("You compact") for b in agent.server.requests)


def test_without_jinja_doctor_probe_says_to_describe_the_tools(agent: Agent) -> None:
    agent.server.profile = llama_server(jinja=False)
    agent.server.responders.insert(0, refuses_tools)
    result = agent.run("doctor", "--probe")
    line = doctor_line(result.stdout, "tool calls")
    assert "tools: error: HTTP 500" in line and 'works with tool_calls = "text"' in line
    assert result.returncode == 0, result.stdout


def test_without_jinja_a_run_with_tools_says_what_the_server_said(agent: Agent) -> None:
    agent.server.profile = llama_server(jinja=False)
    result = agent.run("run", "hello")
    assert result.returncode != 0
    assert "tools param requires --jinja flag" in result.stderr
    assert "Traceback" not in result.stderr
