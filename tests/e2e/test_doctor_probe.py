"""`agentcli doctor --probe` (issue 29, item 2), through the installed command: one tiny
request with a trivial tool, and what the server did with it (a structured call, a call
written as text, no call), the settings that work, and the window it found or that it
found none. Each scripted server below answers as a kind of real one does."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

import pytest

from agentcli.agent.model.tool_probe import PROBE_TOOL
from tests.e2e.conftest import Agent
from tests.helpers.scripted_server import Reply, ScriptedServer, error, text, tool_calls
from tests.helpers.terminal import doctor_line

NAME = PROBE_TOOL["function"]["name"]  # type: ignore[index]


def structured(body: dict) -> Reply:
    """A server with a tool-call parser (llama-server --jinja, vLLM, OpenAI)."""
    return tool_calls((NAME, {"zone": "UTC"})) if body.get("tools") else text("It is noon.")


def only_when_forced(body: dict) -> Reply:
    """llama-cpp-python's chatml-function-calling: `tools` ignored without `tool_choice`."""
    forced = isinstance(body.get("tool_choice"), dict)
    return tool_calls((NAME, {"zone": "UTC"})) if forced else text("It is 12:00 in UTC.")


def as_text(body: dict) -> Reply:
    """A model that writes the call in its answer (a server without a tool-call parser)."""
    call = json.dumps({"name": NAME, "arguments": {"zone": "UTC"}})
    return text(f"<tool_call>\n{call}\n</tool_call>")


def refuses_tools(body: dict) -> Reply:
    """llama-server without --jinja: a request with `tools` is refused; the prompt is read."""
    if body.get("tools"):
        return error(500, "tools param requires --jinja flag", type_="server_error")
    return as_text(body) if "<tool_call>" in body["messages"][0]["content"] else text("no")


def never(body: dict) -> Reply:
    return text("It is probably noon.")


@pytest.fixture
def server(request: pytest.FixtureRequest) -> Iterator[ScriptedServer]:
    marker = request.node.get_closest_marker("window")
    with ScriptedServer(context_window=marker.args[0] if marker else None) as s:
        yield s


def probe(agent: Agent, answer: Callable[[dict], Reply]) -> tuple[int, str, list[dict]]:
    agent.server.responders.append(answer)
    result = agent.run("doctor", "--probe")
    return result.returncode, result.stdout, agent.server.requests


@pytest.mark.window(2048)
def test_a_server_that_calls_the_tool(agent: Agent) -> None:
    code, out, sent = probe(agent, structured)
    assert code == 0, out
    line = doctor_line(out, "tool calls")
    assert line.startswith("✓") and "tools: a structured call" in line
    assert 'works with tool_calls = "native" or "auto"' in line
    assert len(sent) == 1 and sent[0]["tools"] == [PROBE_TOOL] and sent[0]["max_tokens"] <= 100
    assert doctor_line(out, "context window") == "✓ context window: 2,048 tokens (the server says)"


def test_a_server_that_ignores_tools_unless_forced(agent: Agent) -> None:
    code, out, sent = probe(agent, only_when_forced)
    assert code == 0, out
    line = doctor_line(out, "tool calls")
    assert "tools: no call; tools + tool_choice naming the tool: a structured call" in line
    assert f'works with tool_choice = "{NAME}"' in line
    assert sent[1]["tool_choice"] == {"type": "function", "function": {"name": NAME}}
    # and it found no window: it says so, and what to set
    window = doctor_line(out, "context window")
    assert window.startswith("-") and "none found" in window and "context_window" in window


def test_a_model_that_writes_the_call_as_text(agent: Agent) -> None:
    code, out, _ = probe(agent, as_text)
    line = doctor_line(out, "tool calls")
    assert code == 0 and "tools: a call written as text" in line
    assert 'tool_calls = "auto" (the default) or "text"' in line


def test_a_server_that_refuses_tools_is_told_to_use_text_mode(agent: Agent) -> None:
    code, out, sent = probe(agent, refuses_tools)
    line = doctor_line(out, "tool calls")
    assert code == 0, out
    assert "tools: error: HTTP 500" in line and "described in the prompt: a call written" in line
    assert 'works with tool_calls = "text"' in line
    assert "tools" not in sent[-1]


def test_a_model_that_never_calls_fails_the_check(agent: Agent) -> None:
    code, out, sent = probe(agent, never)
    assert code == 1
    line = doctor_line(out, "tool calls")
    assert line.startswith("✗") and "no setting made this model call a tool" in line
    assert len(sent) == 3  # each way tried once
    assert "probably noon" not in out  # the model's words are not shown


def test_without_probe_nothing_is_asked_of_the_model(agent: Agent) -> None:
    result = agent.run("doctor")
    assert result.returncode == 0, result.stdout
    assert agent.server.requests == [] and "tool calls" not in result.stdout
