"""A LangGraph server's stream parts as a local graph's (agentcli/session/server_stream.py)."""

from __future__ import annotations

from types import SimpleNamespace

from langchain_core.messages import AIMessage, ToolMessage

from agentcli.session.server_stream import graph_parts


def part(event: str, data: object) -> SimpleNamespace:
    return SimpleNamespace(event=event, data=data)


def test_a_tasks_result_carries_langchain_messages() -> None:
    tool = {"type": "tool", "content": "exit code 3", "tool_call_id": "c1", "name": "shell"}
    ai = {"type": "ai", "content": "", "usage_metadata": None}
    parts = [
        part("tasks", {"id": "t1", "name": "tools", "result": {"messages": [tool]}}),
        part("tasks", {"id": "t2", "name": "agent", "result": {"messages": {"$writes": [ai]}}}),
        part("tasks", {"id": "t3", "name": "agent", "input": {"x": 1}}),
    ]
    (_, done), (_, writes), (_, started) = graph_parts(parts)
    (message,) = done["result"]["messages"]
    assert isinstance(message, ToolMessage) and message.tool_call_id == "c1"
    (written,) = writes["result"]["messages"]["$writes"]
    assert isinstance(written[0], AIMessage)
    assert started == {"id": "t3", "name": "agent", "input": {"x": 1}}


def test_a_malformed_tasks_result_is_passed_on_not_raised() -> None:
    """Only the telemetry reads tasks parts: messages it cannot read never fail the run."""
    bad = {"id": "t1", "name": "tools", "result": {"messages": [{"type": "tool"}]}}
    assert list(graph_parts([part("tasks", bad)])) == [("tasks", bad)]
