"""The order the calls of one model turn run in: the model's, wherever it matters.

The review sends each approved call of a turn as its own tools task, and LangGraph runs
those tasks side by side. A call that may change files waits for every call before it in
the turn; a call that only reads waits for the last call before it that may change files
(reads next to each other run together). So `write_file a.py` then `shell python a.py` runs
in that order, and `read_file a` before `write_file a` reads what was there.

Each task is sent with the ids of the calls it waits for (`after`, sealed with its call: a
client of a server cannot make a task wait for ever) and waits on the process's task board
(task_board.py). Every task posts there as it is taken up, and again when it ends, however
it ends: a call that did not run (Ctrl-C while it waited, or one before it did not run)
posts so, and the calls after it do not run either; the model is told. A call before it
that stops the run with a question (asked about again after a crash) makes it wait for the
answer: it leaves no result (an empty GraphInterrupt), so LangGraph runs it again with the
run that answers, after that call. LangGraph takes tasks up in the order they were sent,
so waiting does not go round in a circle; should a call before this one not even be taken
up in TAKE_UP_S (a server whose worker threads are all busy), this one does not run rather
than wait for ever.

After a crash, the step's tasks run again (LangGraph's first step of the resumed run): the
calls before this one whose results the step saved ended in the process that died; it
waits for the others, which run again here.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from langgraph.errors import GraphInterrupt

from agentcli.agent.task_board import BOARD, Posted
from agentcli.snapshots.call_snapshots import READ_ONLY_TOOLS

TAKEN, ENDED, NOT_RUN = "taken", "ended", "not run"  # what a call of a turn posts
ASKED = "asked"  # it stopped the run with a question (asked about again after a crash)
LATER = "later"  # this call waits for the answer too: it runs with the run that follows it
TAKE_UP_S = 60.0  # how long a call waits for the ones before it to be taken up at all
STOPPED = "not run: the run was stopped (Ctrl-C) before this call's turn came"
AFTER_NOT_RUN = (
    "not run: a call before it in the turn did not run (stopped, or asked about again after"
    " a crash); propose it again if it is still wanted"
)
NOT_STARTED = "not run: the calls before it in the turn did not start (the workers were busy)"
UNKNOWN = "not run: after a crash, which calls before it had ended could not be read"


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
    thread_id: str,
    step: int,
    call_id: Any,
    after: Sequence[str],
    cancel: Any,
    saved: Callable[[], set[str]] | None = None,
) -> Iterator[str | None]:
    """Around one call of a turn: waits for the calls `after` names, then yields None when
    the call may run, else why not (its tool message; LATER: raise an empty GraphInterrupt,
    to run with the next run). `saved`, when LangGraph runs the
    step again after a crash: the ids of the calls whose results it saved."""
    run, own = _board_run(step), str(call_id)
    BOARD.post(thread_id, run, own, Posted(TAKEN))
    outcome = NOT_RUN  # also when the body raises
    try:
        why = _wait(thread_id, run, [str(c) for c in after], cancel, saved)
        yield why
        if why is None:
            outcome = ENDED
    except GraphInterrupt:  # a question (or LATER): the calls after it wait for the answer
        outcome = ASKED
        raise
    finally:
        BOARD.post(thread_id, run, own, Posted(outcome))


def _wait(
    thread_id: str,
    run: str,
    wanted: list[str],
    cancel: Any,
    saved: Callable[[], set[str]] | None,
) -> str | None:
    if wanted and saved is not None:
        try:
            ended = saved()
        except Exception:  # noqa: BLE001 - not knowing, it does not run
            return UNKNOWN
        wanted = [c for c in wanted if c not in ended]
    if not wanted:
        return None

    def stopped() -> bool:
        return cancel is not None and bool(cancel.is_set())

    deadline = time.monotonic() + TAKE_UP_S
    taken = BOARD.wait(thread_id, run, wanted, lambda: stopped() or time.monotonic() > deadline)
    if taken is None:
        return STOPPED if stopped() else NOT_STARTED
    got = BOARD.wait(thread_id, run, wanted, stopped, lambda p: p.outcome != TAKEN)
    if got is None or stopped():
        return STOPPED
    if any(p.outcome == NOT_RUN for p in got.values()):
        return AFTER_NOT_RUN
    if any(p.outcome == ASKED for p in got.values()):
        return LATER
    return None
