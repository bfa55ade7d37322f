"""A LangGraph server's stream and state as a local graph's: its JSON messages as
LangChain's, its parts as `graph.stream(stream_mode=[...])` yields them, its errors as one
line, its times as Unix time. What remote.py reads from the server goes through here.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import Any

from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    AnyMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

from agentcli.errors import AgentcliError

MASKED = "An internal error occurred"  # what the server says instead of the message
# A stream cut by the server (it died, it restarts) is reconnected by langgraph-sdk for a
# while, which warns on stderr that events sent meanwhile are lost: the state read when
# the run ends is what counts here, and errors stay one line.
warnings.filterwarnings("ignore", "Reconnecting without a Last-Event-ID", UserWarning)
MESSAGE_TYPES: dict[str, type[AnyMessage] | type[AIMessageChunk]] = {
    "ai": AIMessage,
    "AIMessageChunk": AIMessageChunk,
    "tool": ToolMessage,
    "human": HumanMessage,
    "system": SystemMessage,
}


def to_message(data: Any) -> Any:
    """A LangChain message from the server's JSON form (None if it is not one)."""
    kind = MESSAGE_TYPES.get(data.get("type", "")) if isinstance(data, dict) else None
    return kind.model_validate(data) if kind else None


def to_messages(items: Iterable[Any]) -> list[Any]:
    return [message for message in map(to_message, items) if message is not None]


def graph_parts(parts: Iterable[Any]) -> Iterator[tuple[str, Any]]:
    """A server's stream as `graph.stream(stream_mode=[...])` gives it, for the modes
    read here: "updates", "custom", and "tasks" (a watcher's), messages as LangChain's."""
    for part in parts:
        event, data = part.event, part.data
        if event == "error":
            raise AgentcliError(f"the run failed on the server: {_error_text(data)}")
        if event == "updates" and isinstance(data, dict):
            yield "updates", {node: _with_messages(update) for node, update in data.items()}
        elif event == "tasks" and isinstance(data, dict):
            yield "tasks", _task(data)
        elif event == "custom":
            yield "custom", data


def _task(data: dict[str, Any]) -> dict[str, Any]:
    """A task's start or result; only a watcher reads it, so a result whose messages are
    not messages is passed on as it came (the watcher skips it), never failing the run."""
    if not data.get("result"):
        return data
    try:
        return {**data, "result": _with_messages(data["result"])}
    except Exception:  # pydantic's errors, and its validators' own (a KeyError...)
        return data


def _error_text(data: Any) -> str:
    """The server's error event; it hides the message of all but builtin exceptions."""
    if not isinstance(data, dict):
        return str(data)
    kind, message = data.get("error") or "error", data.get("message") or ""
    if not message or message == MASKED:
        return f"{kind} (the server's log has the details)"
    return f"{kind}: {message}"


def _with_messages(update: Any) -> Any:
    """A node's writes, their messages as LangChain's: a list of them, one, or several
    writes of either (LangGraph's `$writes`, in a task's result)."""
    if not isinstance(update, dict):
        return update
    written = update.get("messages")
    if isinstance(written, list):
        return {**update, "messages": to_messages(written)}
    if isinstance(written, dict) and isinstance(written.get("$writes"), list):
        writes = [to_messages(w if isinstance(w, list) else [w]) for w in written["$writes"]]
        return {**update, "messages": {"$writes": writes}}
    if isinstance(written, dict):
        return {**update, "messages": to_messages([written])}
    return update


def unix_time(stamp: Any) -> float | None:
    """An ISO 8601 time from the server, as Unix time (None if it is not one)."""
    try:
        return datetime.fromisoformat(str(stamp)).timestamp() if stamp else None
    except ValueError:
        return None
