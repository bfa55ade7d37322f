"""What may watch a local session's runs besides its front end: the telemetry
(agentcli/telemetry/), which the command line attaches when the person asked for it.

A watcher sees each run start and end, and the parts of the graph's stream in the modes it
names (LangGraph's "tasks": each node's start and result), as they come. It reads what
already flows; nothing in the graph calls it. A watcher must not raise: it is called
between the stream's parts, and must never stop or slow a run for its own sake.
"""

from __future__ import annotations

from typing import Any, Literal, Protocol

RunKind = Literal["message", "answer", "retry"]  # a new message, a review answered, a retry


class RunWatcher(Protocol):
    modes: tuple[str, ...]  # the stream modes it reads (added to the run's when missing)

    def started(self, thread_id: str, kind: RunKind, asked_at: float | None) -> None:
        """A run starts; `asked_at`: for an answer, when the review it answers was asked
        (Unix time), if known."""

    def part(self, mode: str, chunk: Any) -> None:
        """One part of the stream, in one of `modes`."""

    def ended(self, status: str) -> None:
        """The run ended: a RunStatus value, "interrupted" or "error"."""


def run_kind(graph_input: Any) -> RunKind:
    """Which kind of run a graph input starts: a message (a state update), an answer (a
    Command), or a retry (nothing)."""
    if graph_input is None:
        return "retry"
    return "message" if isinstance(graph_input, dict) else "answer"
