"""Sending what `agentcli review` decided (review_plan.Plan), one thread after another, each
continuing like `run --thread ID`.

Every thread is prepared before any is sent: opened (held), its calls read again and
checked against the digests they were looked up with, its decisions built and checked. A
thread prepared before another is opened again when its turn comes, and sent only if its
calls still wait with the same digests. With several threads, one that fails or waits
again does not stop the others: its error is one line, and the exit code is the worst of
theirs (1 or 2 for an error, else 3 if one waits for review again); --output json prints
an array of their objects.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import typer

from agentcli.cli.common_options import OutputFormat, warn
from agentcli.cli.review_plan import Plan, ThreadAsk, decisions
from agentcli.cli.session_opening import warn_expired
from agentcli.errors import AgentcliError, ExitCode, ThreadBusy, UsageError, exit_code_for
from agentcli.session.call_digests import ThreadCalls
from agentcli.terminal_text import dumps, line, visible

if TYPE_CHECKING:
    from agentcli.decisions import Decision
    from agentcli.session.thread_session import ThreadSession

# how bad an exit code is, least first: done, waiting again, an error, a refusal
SEVERITY = (ExitCode.OK, ExitCode.AWAITING_REVIEW, ExitCode.ERROR, ExitCode.USAGE)


@dataclass
class Prepared:
    """A thread's decisions, and the digests of the calls they answer, in order."""

    thread_id: str
    digests: list[str]
    decisions: list[Decision]


def decide(
    session: ThreadSession, plan: Plan, output: OutputFormat, message: str | None, args: str | None
) -> None:
    """Send the plan's decisions; exit with the worst of the threads' codes."""
    if plan.decided and not plan.threads and output is OutputFormat.json:
        print(dumps({"status": "already_decided", "calls": plan.decided}, indent=2))
    ready = [p for ask in plan.threads.values() if (p := _prepare(session, ask, message, args))]
    several = len(ready) > 1
    reports: list[dict[str, Any]] | None = [] if several and output is OutputFormat.json else None
    codes = [_send(session, item, output, reports, several) for item in ready]
    if reports is not None:
        print(dumps(reports, indent=2))
    worst = max(codes, key=_severity, default=ExitCode.OK)
    if worst != ExitCode.OK:
        raise typer.Exit(worst)


def _prepare(
    session: ThreadSession, ask: ThreadAsk, message: str | None, args: str | None
) -> Prepared | None:
    """Hold the thread, check the calls named still wait as they were found, build its
    decisions (UsageError: nothing is sent to any thread). None: 'all' of nothing."""
    if session.row is None or session.thread_id != ask.thread_id:
        try:
            session.open(ask.thread_id)
        except ThreadBusy:  # another process holds it: maybe deciding the same calls
            from agentcli.cli.review_wait import while_decided_elsewhere

            local = session.local("deciding a thread another process holds")
            if isinstance(while_decided_elsewhere(local, ask.thread_id, ask.asked()), Plan):
                return None  # decided there, as asked: said
            session.open(ask.thread_id)  # let go undecided: the digests are checked below
        warn_expired(session.thread_id, session.expired, session.settings.expire_after)
    calls = _waiting(session)
    ask.check(calls.pending)
    if not calls.pending:
        warn(f"thread {ask.thread_id} has no calls awaiting review; nothing changed")
        return None
    requests = [dict(call.request or {}) for call in calls.pending]
    made = decisions(session, ask, requests, message, args)
    return Prepared(ask.thread_id, [call.digest for call in calls.pending], made)


def _send(
    session: ThreadSession,
    item: Prepared,
    output: OutputFormat,
    reports: list[dict[str, Any]] | None,
    several: bool,
) -> int:
    """Send one thread's decisions and play its run: its exit code. Alone, the thread's
    exit and errors are the command's; one of several, they are said and counted."""
    from agentcli.cli.run_output import Scripted

    try:
        if session.thread_id != item.thread_id:  # another thread was prepared since
            session.open(item.thread_id)
            warn_expired(session.thread_id, session.expired, session.settings.expire_after)
            now = [call.digest for call in _waiting(session).pending]
            if now != item.digests:
                raise UsageError(
                    f"the calls of thread {item.thread_id} changed while this review ran;"
                    " nothing changed in that thread (agentcli review lists them)"
                )
        if several and output is OutputFormat.text:
            title = session.row.title if session.row else ""
            print(line(f"thread {item.thread_id}  {title}"), file=sys.stderr, flush=True)
        Scripted(session, output, reports).answer(item.decisions)
    except typer.Exit as exc:
        if not several:
            raise
        return int(exc.exit_code)
    except AgentcliError as exc:
        if not several:
            raise
        for text in exc.lines:
            print(f"agentcli: error: {visible(' '.join(text.split()))}", file=sys.stderr)
        return int(exit_code_for(exc))
    return ExitCode.OK


def _waiting(session: ThreadSession) -> ThreadCalls:
    pending = session.pending()
    requests = pending.action_requests if pending else []
    return ThreadCalls(session.thread_id, session.values(), requests)


def _severity(code: int) -> int:
    return SEVERITY.index(code) if code in SEVERITY else len(SEVERITY)  # type: ignore[arg-type]
