"""The typed events a session emits; the chat UI and `run --output jsonl` both consume them."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class Event:
    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, **asdict(self)}

    @property
    def type(self) -> str:
        return _snake(type(self).__name__)


@dataclass
class TextDelta(Event):
    """A piece of the assistant's answer, as it streams."""

    text: str


@dataclass
class AssistantMessage(Event):
    """A complete model turn: its text and the tool calls it proposes."""

    text: str
    tool_calls: list[dict[str, Any]]
    usage: dict[str, int] | None = None


@dataclass
class ReviewRequest(Event):
    """Calls waiting for a person: the v1 HITL action requests, each with its call `id`."""

    thread_id: str
    action_requests: list[dict[str, Any]]


@dataclass
class ToolResult(Event):
    """What the model will read for one call: a result, an error, a rejection, feedback."""

    call_id: str
    name: str
    content: str
    status: str = "success"


@dataclass
class ToolOutput(Event):
    """Output of a running tool as it comes (the shell's), before its result."""

    call_id: str
    text: str


@dataclass
class Done(Event):
    """The run stopped: finished (`done`) or waiting at a review (`awaiting_approval`)."""

    thread_id: str
    status: str
    final: str
    usage: dict[str, Any] = field(default_factory=dict)  # tokens, and cost_usd if priced
    pending: list[dict[str, Any]] = field(default_factory=list)


def _snake(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name).lstrip("_")
