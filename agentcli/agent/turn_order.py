"""The order the calls of one model turn run in: the model's, wherever it matters.

The review sends each approved call of a turn as its own tools task, and LangGraph runs
those tasks side by side. A call that may change files waits for every call before it in
the turn; a call that only reads waits for the last call before it that may change files
(reads next to each other run together). So `write_file a.py` then `shell python a.py` runs
in that order, and `read_file a` before `write_file a` reads what was there.

Each task is sent with the ids of the calls it waits for (`after`, sealed with its call: a
client of a server cannot make a task wait for ever) and waits on the process's task board
(task_board.py), where every task posts when it ends, however it ends. Tasks are taken
up in the order they were sent, so waiting never goes round in a circle. A task LangGraph
runs again after a crash waits for nothing: the calls before it may have ended in the
process that died.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from agentcli.agent.task_board import BOARD, Posted
from agentcli.snapshots.call_snapshots import READ_ONLY_TOOLS

ENDED = "ended"  # what a call of a turn posts, however it ended
STOPPED = "not run: the run was stopped (Ctrl-C) before this call's turn came"


def in_order(calls: Sequence[Any], turn: Sequence[Any]) -> list[Any]:
    """`calls` in the order of the model's `turn` (the calls of its message)."""
    place = {id(call): n for n, call in enumerate(turn)}
    by_id = {call.get("id"): n for n, call in enumerate(turn)}
    return sorted(calls, key=lambda c: place.get(id(c), by_id.get(c.get("id"), len(turn))))


def waits(calls: Sequence[Any]) -> list[list[str]]:
    """For each call of a turn, in order, the ids of the calls before it it waits for."""
    out: list[list[str]] = []
    last_change: list[str] = []  # the last call that may change files (or none)
    reads: list[str] = []  # the reads since then
    for call in calls:
        own = str(call.get("id"))
        if call.get("name") in READ_ONLY_TOOLS:
            out.append([c for c in last_change if c != own])
            reads.append(own)
        else:  # the reads since the last change, and that change (which waited for the rest)
            out.append([c for c in [*last_change, *reads] if c != own])
            last_change, reads = [own], []
    return out


def _board_run(step: int) -> str:
    return f"turn at step {step}"


def forget_turn(thread_id: str, step: int) -> None:
    """What the calls of a turn at `step` posted, once they have all ended."""
    BOARD.forget(thread_id, _board_run(step))


@contextmanager
def turn_of(
    thread_id: str, step: int, call_id: str, after: Sequence[str], resuming: bool, cancel: Any
) -> Iterator[bool]:
    """Around one call of a turn: waits for the calls `after` names, then yields True, or
    False when the run was stopped first (the call must not run). Posts when the body ends."""
    run = _board_run(step)
    try:
        if after and not resuming:
            stopped = (lambda: bool(cancel.is_set())) if cancel is not None else (lambda: False)
            yield BOARD.wait(thread_id, run, after, stopped) is not None
        else:
            yield True
    finally:
        BOARD.post(thread_id, run, call_id, Posted(ENDED))
