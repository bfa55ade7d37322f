"""A small context window (issue 29, item 1), through the installed command: the system
prompt and the tools' schemas are fitted to it (terse descriptions, the core tools first,
the rest named as left out), a tool-using thread never sends a request over it, and a
window too small for even the minimum is refused in one line that says what to change.

The scripted server counts each request with a real tokenizer on the prompt a ChatML
template makes of it (tests/helpers/template_tokens.py), tells its window at /props as
llama-server does, and refuses a request over it (400 context_length_exceeded)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import Agent
from tests.e2e.test_context import summariser
from tests.helpers.scripted_server import ScriptedServer, text, tool_calls
from tests.helpers.template_tokens import cl100k
from tests.helpers.terminal import PROMPT, leave

WINDOW = 2048
ALL = ["read_file", "write_file", "edit_file", "list_dir", "search_files", "shell",
       "fetch_url", "calculator"]  # fmt: skip


@pytest.fixture
def server(request: pytest.FixtureRequest) -> Iterator[ScriptedServer]:
    marker = request.node.get_closest_marker("window")
    size = marker.args[0] if marker else WINDOW
    with ScriptedServer(context_window=size, count=cl100k) as s:
        s.responders.append(summariser)
        yield s


def configure(agent: Agent, body: str) -> None:
    path = Path(agent.env["XDG_CONFIG_HOME"]) / "agentcli" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body)


def offered(body: dict) -> list[str]:
    return [tool["function"]["name"] for tool in body.get("tools") or []]


def test_a_tool_using_thread_never_passes_a_2048_window(agent: Agent) -> None:
    """Ten turns, each reading a file of about 200 tokens and answering: the thread outgrows
    the window many times over, and is compacted so that no request is refused."""
    notes = agent.workspace / "notes"
    notes.mkdir()
    thread, stderr = "", ""
    for n in range(1, 11):
        (notes / f"day{n}.txt").write_text(f"day {n}: the river was calm.\n" * 25)
        agent.server.push(
            tool_calls(("read_file", {"path": f"notes/day{n}.txt"})),
            text(f"In turn {n}, the notes say the river was calm. " * 4),
        )
        where = ("--thread", thread) if thread else ()
        result = agent.run("run", *where, f"Turn {n}: what do day {n}'s notes say?",
                           "--approve", "read_file", "-o", "json")  # fmt: skip
        assert result.returncode == 0, result.stdout + result.stderr
        thread, stderr = json.loads(result.stdout)["thread_id"], stderr + result.stderr
    counted = [body["_counted"] for body in agent.server.requests]
    assert max(counted) <= WINDOW, counted  # none refused: every request fitted
    assert any(body["messages"][0]["content"].startswith("You compact")
               for body in agent.server.requests)  # fmt: skip  # it did outgrow the window
    turns = [body for body in agent.server.requests if "tools" in body]
    names = offered(turns[0])
    assert {"read_file", "list_dir", "edit_file", "shell"} <= set(names) < set(ALL)
    assert all(offered(body) == names for body in turns)  # the same set every request
    left = [name for name in ALL if name not in names]
    assert f"left out to fit: {', '.join(left)}" in stderr  # said, on stderr, every run
    # terse: one sentence a tool, no per-argument help
    read = next(t["function"] for t in turns[0]["tools"] if t["function"]["name"] == "read_file")
    assert read["description"] == "Read a text file from the workspace, with line numbers."
    assert all("description" not in p for p in read["parameters"]["properties"].values())


@pytest.mark.window(8192)
def test_a_big_window_offers_every_tool_in_full(agent: Agent) -> None:
    agent.server.push(text("hi"))
    result = agent.run("run", "hello")
    assert result.returncode == 0, result.stderr
    [body] = agent.server.requests
    assert offered(body) == ALL
    read = next(t["function"] for t in body["tools"] if t["function"]["name"] == "read_file")
    assert "Long files are shown a part at a time" in read["description"]
    assert "left out" not in result.stderr


def test_the_core_set_is_configurable(agent: Agent) -> None:
    configure(agent, '[tools]\ncore = ["calculator", "fetch_url"]\n')
    agent.server.push(text("hi"))
    result = agent.run("run", "hello")
    assert result.returncode == 0, result.stderr
    names = offered(agent.server.requests[0])
    assert {"calculator", "fetch_url"} <= set(names) < set(ALL)
    assert "left out to fit:" in result.stderr and "calculator" not in result.stderr


def test_text_mode_describes_only_what_fits(agent: Agent) -> None:
    configure(agent, '[model]\ntool_calls = "text"\n')
    agent.server.push(text("hi"))
    result = agent.run("run", "hello")
    assert result.returncode == 0, result.stderr
    [body] = agent.server.requests
    assert "tools" not in body
    system = body["messages"][0]["content"]
    left = result.stderr.split("left out to fit: ")[1].split()[0].rstrip(",")
    assert f"## {left}\n" not in system and "## read_file\n" in system
    assert body["_counted"] <= WINDOW // 2  # room for the conversation


@pytest.mark.window(400)
def test_a_window_too_small_for_the_minimum_says_what_to_change(agent: Agent) -> None:
    result = agent.run("run", "hello")
    assert result.returncode == 2, result.stdout + result.stderr
    assert agent.server.requests == []  # nothing sent that could not fit
    lines = [line for line in result.stderr.splitlines() if "context window" in line]
    assert len(lines) == 1, result.stderr
    assert "of 400 tokens cannot hold agentcli's fixed part" in lines[0]
    assert "[model] context_window" in lines[0] and "-c" in lines[0]
    assert "Traceback" not in result.stderr


def test_doctor_shows_the_fixed_part_against_the_window(agent: Agent) -> None:
    result = agent.run("doctor")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "✓ context window: 2,048 tokens (the server says)" in result.stdout
    [line] = [line for line in result.stdout.splitlines() if "fixed part:" in line]
    assert "of a 2,048-token window; left out to fit:" in line and "terse" in line


@pytest.mark.window(400)
def test_doctor_fails_a_window_too_small(agent: Agent) -> None:
    result = agent.run("doctor")
    assert result.returncode == 1
    [line] = [line for line in result.stdout.splitlines() if "fixed part:" in line]
    assert line.startswith("✗") and "cannot hold agentcli's fixed part" in line


def test_the_chat_header_shows_the_fixed_part(agent: Agent) -> None:
    agent.server.push(text("hello there"))
    child = agent.spawn("chat")
    child.expect(PROMPT)
    child.sendline("hi")
    child.expect(r"context: fixed part [\d,]+ tokens \(\d of 8 tools, terse descriptions\)")
    child.expect("of a 2,048-token window; left out to fit:")
    child.expect("hello there")
    leave(child)
