"""`agentcli review`: the inbox of pending calls across threads, or one thread's; deciding
calls named by CALL_ID@DIGEST (as listed) or by a call id no other call had, in one thread
or several, then continuing each thread like `run --thread ID` (review_runs.py). A decision
sent again for a call already decided the same way changes nothing and exits 0 (safe for
a script that retries); a name that could mean another call than the one listed is refused
(review_plan.py, session/call_lookup.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from agentcli.cli.common_options import (
    Common,
    ModeOpt,
    OutputFormat,
    ThreadOpt,
    common_options,
    warn_if_clipped,
)
from agentcli.cli.review_plan import Asked, Plan
from agentcli.cli.run import OutputOpt
from agentcli.cli.session_opening import open_session, warn_expired
from agentcli.errors import ThreadBusy, UsageError

if TYPE_CHECKING:
    from agentcli.session.local import Session
    from agentcli.session.thread_session import ThreadSession


IdsOpt = list[str] | None
CALL = "CALL_ID[@DIGEST]"


@common_options(server=True)
def review(
    thread_id: Annotated[
        str | None,
        typer.Argument(metavar="[ID]", help="Thread id or unique prefix (default: every thread)."),
    ] = None,
    thread: ThreadOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="List pending calls as JSON.")] = False,
    approve: Annotated[
        IdsOpt,
        typer.Option("--approve", metavar=f"{CALL}|all", help="Approve a call (repeatable)."),
    ] = None,
    reject: Annotated[
        IdsOpt,
        typer.Option("--reject", metavar=f"{CALL}|all", help="Reject a call (repeatable)."),
    ] = None,
    done: Annotated[
        IdsOpt,
        typer.Option(
            "--done",
            metavar=f"{CALL}|all",
            help="A call cut off by a crash: treat it as done, not run again (result unknown).",
        ),
    ] = None,
    message: Annotated[
        str | None, typer.Option("--message", help="With --reject: feedback for the model.")
    ] = None,
    edit: Annotated[str | None, typer.Option("--edit", metavar=CALL, help="Edit a call.")] = None,
    args: Annotated[
        str | None, typer.Option("--args", metavar="JSON", help="With --edit: new arguments.")
    ] = None,
    unconfined: Annotated[
        IdsOpt,
        typer.Option(
            "--unconfined",
            metavar=CALL,
            help="Approve a call that would run in the sandbox, to run unconfined this once.",
        ),
    ] = None,
    output: OutputOpt = OutputFormat.text,
    mode: ModeOpt = None,
    *,
    common: Common,
) -> None:
    """List the calls awaiting review in every thread (or in thread ID), or decide them and
    continue each thread like `run --thread ID`.

    Name a call as the list shows it, CALL_ID@DIGEST: the digest is of the thread, the
    call and its arguments, so a call that changed since it was listed is refused. A bare
    CALL_ID is enough when no other call, waiting or decided, had that id (in thread ID,
    or in any thread without one). Calls of several threads may be decided at once: each
    thread continues in turn, the exit code is the worst of theirs (1 or 2 for an error,
    else 3 if one waits for review again), and --output json prints an array. Deciding a
    call already decided the same way says so and exits 0, changing nothing. The thread
    continues in the approval mode of --mode, else of [approval] mode.
    """
    common.take_mode(mode, False)
    if thread and thread_id and thread != thread_id:
        raise UsageError("give the thread once: ID or --thread ID")
    named = thread or thread_id
    if message is not None and not reject:
        raise UsageError("--message is feedback for rejected calls: it goes with --reject")
    warn_if_clipped(message, "the --message")
    if (edit is None) != (args is None):
        raise UsageError("--edit CALL_ID and --args JSON go together")
    asked = Asked(approve or [], reject or [], done or [], unconfined or [], edit)
    session = open_session(common)
    if named is None:
        local: Session = session.local("the inbox (agentcli review with no thread id)")
        local.explicit_workspace = False  # each thread works in its own workspace
        plan = _from_inbox(local, asked, as_json)
        session = local
    else:
        plan = _from_thread(session, named, asked, as_json)
    if plan is None:
        return
    from agentcli.cli.review_runs import decide

    decide(session, plan, output, message, args)


def _from_inbox(session: Session, asked: Asked, as_json: bool) -> Plan | None:
    """List the inbox, or look up the calls named in every thread (None: listed)."""
    from agentcli.cli.inbox_view import show_inbox
    from agentcli.session.call_lookup import Lookup
    from agentcli.session.inbox import Expired, decided_calls, inbox

    if asked.everything:
        raise UsageError("'all' needs a thread: agentcli review --thread ID --approve all")
    expired: list[Expired] = []
    read: dict = {}
    calls = inbox(session, expired, read)
    for item in expired:
        warn_expired(item.thread_id, item.review, session.settings.expire_after)
    if not asked.anything:
        show_inbox(calls, as_json)
        return None
    waiting = [seen for thread in read.values() for seen in thread.pending]
    return Plan.of(asked, Lookup(waiting, decided_calls(session, read), "in any thread"))


def _from_thread(session: ThreadSession, named: str, asked: Asked, as_json: bool) -> Plan | None:
    """List one thread's pending calls, or look up the calls named in it (None: listed)."""
    from agentcli.cli.run_output import list_pending
    from agentcli.session.call_digests import ThreadCalls
    from agentcli.session.call_lookup import Lookup

    try:
        session.open(named)
    except ThreadBusy:
        if not asked.anything:
            raise
        from agentcli.cli.review_wait import while_decided_elsewhere

        local: Session = session.local("deciding a thread another process holds")
        waited = while_decided_elsewhere(local, named, asked)
        if isinstance(waited, Plan):
            return waited
        asked = waited  # the thread was let go undecided: decide what was asked of it
        session.open(named)
    warn_expired(session.thread_id, session.expired, session.settings.expire_after)
    pending = session.pending()
    requests = pending.action_requests if pending else []
    calls = ThreadCalls(session.thread_id, session.values(), requests)
    if not asked.anything:
        pairs = zip(requests, calls.pending, strict=True)
        list_pending([{**r, "digest": c.digest} for r, c in pairs], as_json)
        return None
    lookup = Lookup(calls.pending, [calls], f"in thread {session.thread_id}")
    return Plan.of(asked, lookup, session.thread_id)
