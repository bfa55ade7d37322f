"""A decision sent for a thread another process holds (`agentcli review`): most often one
sending the same decision at the same moment, a script that retries. The thread is watched,
not taken, until the calls asked of it are decided there; then they are looked up as decided
calls are (review_plan.already: the same decision is said and exits 0, another exits 2), so
nothing is sent twice."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from agentcli.cli.common_options import warn
from agentcli.cli.review_plan import Asked, Plan

if TYPE_CHECKING:
    from agentcli.session.local import Session

BUSY_WAIT_S = 60.0  # how long a decision waits for a thread another process is deciding
BUSY_GRACE_S = 10.0  # ... or for one held by a process not deciding it (yet)
BUSY_POLL_S = 0.1


def while_decided_elsewhere(session: Session, named: str, asked: Asked) -> Plan | Asked:
    """Another process holds the thread: most often one sending the same decision at the
    same moment (a script that retries). Watch the thread without taking it until the
    calls asked of it no longer wait: then they are looked up as decided ones are (the
    same decision: said, exit 0; another: exit 2), and nothing is sent twice. 'all' means
    the calls waiting when first read. If the holder lets go with the calls still
    waiting (a chat that quit), the Asked to decide them with. ThreadBusy after BUSY_WAIT_S
    while the holder runs the thread, after BUSY_GRACE_S while it is not (yet) deciding.
    """
    from agentcli.session.call_digests import ThreadCalls
    from agentcli.session.call_lookup import Lookup
    from agentcli.session.inbox import read_thread
    from agentcli.thread_rows import ThreadStatus

    row = session.store.resolve(named)
    grace, deadline = time.monotonic() + BUSY_GRACE_S, time.monotonic() + BUSY_WAIT_S
    while True:
        review, snapshot, busy = read_thread(session, row)
        requests = review.action_requests if review else []
        calls = ThreadCalls(row.thread_id, snapshot.values, requests)
        asked = asked.pinned(calls.pending)  # 'all': the calls waiting now, by digest
        if not asked.anything:
            warn(f"thread {row.thread_id} has no calls awaiting review; nothing changed")
            return Plan()
        if not busy:
            return asked
        lookup = Lookup(calls.pending, [calls], f"in thread {row.thread_id}")
        plan = Plan.of(asked, lookup, row.thread_id)
        if not plan.threads:  # decided by the holder: each said (or refused) by Plan.of
            return plan
        # a holder that is not deciding (a chat sitting at its review) has the thread indexed
        # as awaiting approval: refused after a moment, as the thread stays busy
        deciding = session.store.resolve(row.thread_id).status == ThreadStatus.RUNNING
        if time.monotonic() > (deadline if deciding else grace):
            session.open(named)  # ThreadBusy, naming the holder, if it still holds it
            return asked
        time.sleep(BUSY_POLL_S)
