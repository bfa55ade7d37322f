"""MCP servers that hang or die mid-call (real FastMCP servers, over HTTP and stdio), driven
through the installed command: every call ends within its server's `timeout`, a server that
dies is an error at once, Ctrl-C in the chat stops the call, and a server that is down is
named to the model instead of "unknown tool"."""

from __future__ import annotations

import json
import socket
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Agent
from tests.helpers import FAULTY_MCP_SERVER as SERVER
from tests.helpers.mcp_http import served
from tests.helpers.scripted_server import text, tool_calls
from tests.helpers.terminal import PROMPT, leave
from tests.helpers.waiting import running, until


@contextmanager
def configured(agent: Agent, transport: str, timeout: float) -> Iterator[None]:
    """The faulty server as [mcp.servers.f], over `transport`, with this call timeout."""
    with served(SERVER) if transport == "http" else _nothing() as (url, _):
        where = f"url = {json.dumps(url)}" if url else _stdio()
        path = Path(agent.env["XDG_CONFIG_HOME"]) / "agentcli" / "config.toml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            f"[sandbox]\nmode = 'off'\n\n[mcp.servers.f]\n{where}\ntimeout = {timeout}\n"
        )
        yield


@contextmanager
def _nothing() -> Iterator[tuple[str, Any]]:
    yield "", None


def _stdio() -> str:
    return f"command = {json.dumps(sys.executable)}\nargs = [{json.dumps(SERVER)}]"


def _tool_message(agent: Agent, request: int) -> str:
    sent = agent.server.requests[request]["messages"]
    return next(m["content"] for m in reversed(sent) if m["role"] == "tool")


def _ran(agent: Agent, tool: str, started: Path) -> str:
    """The model calls `tool` (approved by -y), then answers: what the model was told."""
    agent.server.push(tool_calls((f"f__{tool}", {"started": str(started)})), text("noted"))
    result = agent.run("run", "-y", "call it", "-o", "json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["final"] == "noted"
    assert started.exists()  # the call reached the server
    return _tool_message(agent, 1)


@pytest.mark.parametrize("transport", ["http", "stdio"])
def test_a_call_to_a_server_that_never_answers_ends_at_its_timeout(
    agent: Agent, transport: str
) -> None:
    """The timeout counts from the call's start, a stdio server's start-up included: 20 s
    leaves that start-up room on a busy machine."""
    started = agent.workspace.parent / "started"
    limit = 3 if transport == "http" else 20
    with configured(agent, transport, timeout=limit):
        told = _ran(agent, "hang", started)
    assert told == f"Error: MCP server 'f': no answer within {limit} s: the call was stopped"
    if transport == "stdio":  # the server is stopped with the call
        until(lambda: not running(int(started.read_text())), what="the hung server is gone")


@pytest.mark.parametrize(
    ("transport", "told"),
    [
        ("http", "Error: MCP server 'f': the connection broke mid-call (peer closed connection"),
        ("stdio", "Error: MCP server 'f' is down or failed: it exited or closed the connection"),
    ],
)
def test_a_server_that_dies_mid_call_is_an_error_at_once(
    agent: Agent, transport: str, told: str
) -> None:
    """With a timeout of 10 minutes, only seeing the server die ends the call before the
    command's own deadline (Agent.run's) fails the test."""
    with configured(agent, transport, timeout=600):
        assert _ran(agent, "die", agent.workspace.parent / "started").startswith(told)


def test_a_server_down_at_start_is_named_to_the_model(agent: Agent) -> None:
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    path = Path(agent.env["XDG_CONFIG_HOME"]) / "agentcli" / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_text(f'[mcp.servers.web]\nurl = "http://127.0.0.1:{port}/mcp"\n')
    agent.server.push(tool_calls(("web__add", {"a": 1, "b": 2})), text("it is down"))
    result = agent.run("run", "-y", "add", "-o", "json")
    assert result.returncode == 0, result.stderr
    assert "MCP server 'web' skipped" in result.stderr
    told = _tool_message(agent, 1)
    assert told.startswith("Error: MCP server 'web' is down (") and "unknown tool" not in told
    assert "its tools cannot be called in this session" in told


@pytest.mark.parametrize("transport", ["http", "stdio"])
def test_ctrl_c_in_the_chat_stops_a_hanging_call(agent: Agent, transport: str) -> None:
    started = agent.workspace.parent / "started"
    with configured(agent, transport, timeout=600):
        agent.server.push(tool_calls(("f__hang", {"started": str(started)})))
        child = agent.spawn("chat", "-y", "call it")
        until(started.exists, what="the call reached the server", process=child)
        child.sendintr()
        child.expect("interrupted")
        child.expect(PROMPT)
        assert child.isalive()
        if transport == "stdio":
            until(lambda: not running(int(started.read_text())), what="the hung server is gone")
        agent.server.push(text("Second answer."))
        child.sendline("and now?")
        child.expect("Second answer.")
        thread = leave(child)
    told = _tool_message(agent, 1)
    assert told == "Error: MCP server 'f': interrupted by the user (Ctrl-C): the call was stopped"
    shown = json.loads(agent.run("threads", "show", thread, "--json").stdout)
    assert shown["thread"]["status"] == "idle"
