"""What may watch a session's runs besides its front end: the telemetry
(agentcli/telemetry/), which the command line attaches when the person asked for it. A local
session (run_loop.py) and a server's (remote.py) call it alike, through `watched`.

A watcher sees each run start and end, and the parts of the graph's stream in the modes it
names (LangGraph's "tasks": each node's start and result), as they come. It reads what
already flows; nothing in the graph calls it. A watcher must not raise: it is called
between the stream's parts, and must never stop or slow a run for its own sake.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal, Protocol

from agentcli.errors import AnswerStopped, Interrupted
from agentcli.events import Done, Event

# how a run may stop that is not its failure: Ctrl-C, a stop signal, the reader gone
STOPS = (Interrupted, AnswerStopped, KeyboardInterrupt, SystemExit, GeneratorExit)
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


def watched(
    watcher: RunWatcher | None,
    thread_id: str,
    graph_input: Any,
    events: Iterator[Event],
    asked_at: float | None = None,
) -> Iterator[Event]:
    """A run's events; the watcher, if any, sees it start and end (the stream's parts are
    the driver's to hand it, `part`), whatever way it ends."""
    if watcher is None:
        yield from events
        return
    watcher.started(thread_id, run_kind(graph_input), asked_at)
    status = "interrupted"  # unless it ends or fails otherwise
    try:
        for event in events:
            if isinstance(event, Done):
                status = event.status
            yield event
    except BaseException as exc:
        if not isinstance(exc, STOPS):
            status = "error"
        raise
    finally:
        watcher.ended(status)


def stream_modes(modes: tuple[str, ...], watcher: RunWatcher | None) -> list[str]:
    """The run's own stream modes and those the watcher reads besides."""
    watched = watcher.modes if watcher is not None else ()
    return [*modes, *(m for m in watched if m not in modes)]
