"""The inbox: every call waiting for review, across the threads of the store.

Only threads the index marks awaiting_approval or running are read (their latest checkpoint,
not their history of checkpoints), each held for a moment so that a call cut off by a crash
can be found as `session.pending()` finds it; a thread another process holds (a chat sitting
at its review, a `review` deciding it this moment) is read without taking it, its interrupts
only: its calls are listed `busy` until that process has decided them. Reading runs
nothing, with one exception: a review past `[approval] expire_after` (on_expire = "deny")
is denied here, as opening its thread would deny it (review_expiry.py).

Each call is listed with its digest (call_digests.py), and the threads' decided calls are
read here for the lookup of a call named without a thread (`decided_calls`, call_lookup.py).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from typing import Any

from agentcli.agent.waiting import waiting as waiting_on
from agentcli.errors import ThreadBusy
from agentcli.events import ReviewRequest
from agentcli.policy.rule_subjects import FETCH_TOOL, FILE_TOOLS
from agentcli.session.call_digests import ThreadCalls
from agentcli.session.local import Session
from agentcli.session.review_expiry import is_expired, parked_since, waited
from agentcli.session.stream_events import review_in
from agentcli.thread_rows import ThreadRow, ThreadStatus

SUBJECT_CHARS = 120  # the args JSON, clipped, when a tool has no main argument


@dataclass
class WaitingCall:
    """One call of the inbox, and the thread it waits in."""

    thread_id: str
    title: str
    workspace: str
    call_id: str
    digest: str  # names this call as it is now: CALL_ID@DIGEST (call_digests.py)
    tool: str
    subject: str  # the main argument: the command, the path, the URL; else the args, clipped
    args: Any
    parked_at: str | None  # when the thread parked (its checkpoint's time, UTC)
    waited_s: float | None
    rerun: str | None = None  # cut off by a crash: it may have partly run
    expired: bool = False  # past expire_after, kept (on_expire = "keep")
    busy: bool = False  # another process holds the thread (a chat at its review)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Expired:
    """A review the inbox denied because it waited past `expire_after`."""

    thread_id: str
    review: ReviewRequest


def main_argument(tool: str, args: Any) -> str:
    """What a call is about, for one line: the shell's command, a file tool's path,
    fetch_url's URL; for other tools their args as JSON, clipped."""
    key = "command" if tool == "shell" else "path" if tool in FILE_TOOLS else None
    key = "url" if tool == FETCH_TOOL else key
    if isinstance(args, dict) and key and isinstance(args.get(key), str):
        return str(args[key])
    text = json.dumps(args, ensure_ascii=False, default=repr)
    return text if len(text) <= SUBJECT_CHARS else text[: SUBJECT_CHARS - 1] + "…"


def inbox(
    session: Session,
    expired: list[Expired] | None = None,
    read: dict[str, ThreadCalls] | None = None,
) -> list[WaitingCall]:
    """Every pending call of the store, oldest review first; reviews that expired (and are
    denied) are appended to `expired` instead; `read` gets each listed thread's calls."""
    calls: list[tuple[float, WaitingCall]] = []  # by when parked: the ISO line has seconds only
    rows = [
        *session.store.recent(status=ThreadStatus.AWAITING_APPROVAL),
        *session.store.recent(status=ThreadStatus.RUNNING),
    ]
    for row in rows:
        review, snapshot, busy = read_thread(session, row)
        if review is None:
            continue
        seconds = waited(parked_since(snapshot))
        if not busy and is_expired(session.settings, seconds):
            denied = _expire(session, row)
            if denied is not None:
                if expired is not None:
                    expired.append(Expired(row.thread_id, denied))
                continue
        since = parked_since(snapshot)
        thread = ThreadCalls(row.thread_id, snapshot.values, review.action_requests)
        if read is not None:
            read[row.thread_id] = thread
        for request, seen in zip(review.action_requests, thread.pending, strict=True):
            calls.append(
                (
                    since.timestamp() if since else -math.inf,
                    WaitingCall(
                        thread_id=row.thread_id,
                        title=row.title,
                        workspace=row.workspace,
                        call_id=str(request["id"]),
                        digest=seen.digest,
                        tool=str(request["name"]),
                        subject=main_argument(request["name"], request["args"]),
                        args=request["args"],
                        parked_at=since.isoformat(timespec="seconds") if since else None,
                        waited_s=round(seconds, 1) if seconds is not None else None,
                        rerun=request.get("rerun"),
                        expired=is_expired(session.settings, seconds),
                        busy=busy,
                    ),
                )
            )
    calls.sort(key=lambda parked: parked[0])  # stable: a thread's calls stay in its order
    return [call for _, call in calls]


def decided_calls(session: Session, read: dict[str, ThreadCalls]) -> Iterator[ThreadCalls]:
    """The calls of every thread of the store, most recently updated first, as they are
    needed: those in `read` as the inbox read them, the others from their audit (one load
    of the thread's latest state each)."""
    for row in session.store.recent():
        known = read.get(row.thread_id)
        if known is None:
            config = {"configurable": {"thread_id": row.thread_id}}
            values = session.graph.get_state(config).values
            known = ThreadCalls(row.thread_id, values, ())
        yield known


def read_thread(session: Session, row: ThreadRow) -> tuple[ReviewRequest | None, Any, bool]:
    """The thread's review, its snapshot, and whether another process holds it."""
    store = session.store
    config = {"configurable": {"thread_id": row.thread_id}}
    try:
        with store.briefly(row.thread_id):
            snapshot = session.graph.get_state(config)
            waiting = waiting_on(snapshot, store, row.thread_id)
            busy = False
    except ThreadBusy:
        snapshot = session.graph.get_state(config)
        waiting, busy = list(snapshot.interrupts), True
    return review_in(row.thread_id, _values(waiting)), snapshot, busy


def _values(waiting: list[Any]) -> Iterator[Any]:
    return (item.value for item in waiting)


def _expire(session: Session, row: ThreadRow) -> ReviewRequest | None:
    """Open the thread, which denies its expired review; None if it was not denied."""
    try:
        session.open(row.thread_id)
    except ThreadBusy:  # taken since it was read: its process sees the expiry itself
        return None
    try:
        return session.expired
    finally:
        session.new_thread()  # lets go of the thread
