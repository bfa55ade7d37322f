"""`agentcli review`: the inbox of pending calls across threads, or one thread's; deciding
calls by id (the thread found from the call id when it is unique), then continuing the
thread like `run --thread ID`. A decision sent again for a call already decided the same
way changes nothing and exits 0 (safe for a script that retries)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Any

import typer

from agentcli.cli.common_options import (
    Common,
    OutputFormat,
    ThreadOpt,
    common_options,
    open_session,
    warn,
    warn_expired,
)
from agentcli.cli.inbox_view import already_decided, show_inbox
from agentcli.cli.run import OutputOpt
from agentcli.decisions import Decide, Decision
from agentcli.errors import UsageError

if TYPE_CHECKING:
    from agentcli.events import ReviewRequest
    from agentcli.session.local import Session
    from agentcli.session.thread_session import ThreadSession


BY = "agentcli review"  # who decided, in the audit
IdsOpt = list[str] | None


@common_options(server=True)
def review(
    thread_id: Annotated[
        str | None,
        typer.Argument(metavar="[ID]", help="Thread id or unique prefix (default: every thread)."),
    ] = None,
    thread: ThreadOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="List pending calls as JSON.")] = False,
    approve: Annotated[
        IdsOpt, typer.Option("--approve", metavar="CALL_ID|all", help="Approve a call.")
    ] = None,
    reject: Annotated[
        IdsOpt, typer.Option("--reject", metavar="CALL_ID|all", help="Reject a call.")
    ] = None,
    done: Annotated[
        IdsOpt,
        typer.Option(
            "--done",
            metavar="CALL_ID|all",
            help="A call cut off by a crash: treat it as done, not run again (result unknown).",
        ),
    ] = None,
    message: Annotated[
        str | None, typer.Option("--message", help="With --reject: feedback for the model.")
    ] = None,
    edit: Annotated[
        str | None, typer.Option("--edit", metavar="CALL_ID", help="Edit a call.")
    ] = None,
    args: Annotated[
        str | None, typer.Option("--args", metavar="JSON", help="With --edit: new arguments.")
    ] = None,
    unconfined: Annotated[
        IdsOpt,
        typer.Option(
            "--unconfined",
            metavar="CALL_ID",
            help="Approve a call that would run in the sandbox, to run unconfined this once.",
        ),
    ] = None,
    output: OutputOpt = OutputFormat.text,
    *,
    common: Common,
) -> None:
    """List the calls awaiting review in every thread (or in thread ID), or decide them by
    call id and continue the thread like `run --thread ID`.

    Without a thread, a call id names the call when it is pending in one thread only;
    --thread ID (or ID) says which thread otherwise. Deciding a call already decided the
    same way says so and exits 0, changing nothing.
    """
    if thread and thread_id and thread != thread_id:
        raise UsageError("give the thread once: ID or --thread ID")
    named = thread or thread_id
    if message is not None and not reject:
        raise UsageError("--message is feedback for rejected calls: it goes with --reject")
    if (edit is None) != (args is None):
        raise UsageError("--edit CALL_ID and --args JSON go together")
    asked = Asked(approve or [], reject or [], done or [], unconfined or [], edit)
    session = open_session(common)
    if named is None:
        local: Session = session.local("the inbox (agentcli review with no thread id)")
        local.explicit_workspace = False  # each thread works in its own workspace
        named = _inbox(local, asked, as_json, output)
        if named is None:
            return
    session.open(named)
    warn_expired(session.thread_id, session.expired, session.settings.expire_after)
    pending = session.pending()
    from agentcli.cli.run_output import Scripted, list_pending

    if not asked.ids and not asked.everything:
        list_pending(pending, as_json)
        return
    ids = [r["id"] for r in pending.action_requests] if pending else []
    gone = [call_id for call_id in asked.ids if call_id not in ids]
    if gone and session.server_url:  # its audit is on the server
        raise UsageError(f"no pending call '{gone[0]}' (pending: {', '.join(ids)})")
    if gone:
        local = session.local("review")
        if not already_decided(local, asked.named, gone, output, ids, named) and not (
            asked.everything
        ):
            return
        asked = asked.without(gone)
    if pending is None:  # 'all' of nothing
        warn(f"thread {session.thread_id} has no calls awaiting review; nothing changed")
        return
    decisions = _decisions(session, pending, asked, message, args)
    Scripted(session, output).answer(decisions)


class Asked:
    """The call ids each option names ('all': every pending call of the thread)."""

    def __init__(
        self,
        approve: list[str],
        reject: list[str],
        done: list[str],
        unconfined: list[str],
        edit: str | None,
    ) -> None:
        self.approve, self.reject, self.done, self.unconfined = approve, reject, done, unconfined
        self.edit = edit

    @property
    def named(self) -> list[tuple[str, str]]:
        """(call id, kind) for every id named, 'all' left out."""
        kinds = [
            *((i, "approve") for i in self.approve),
            *((i, "reject") for i in self.reject),
            *((i, "done") for i in self.done),
            *((i, "approve") for i in self.unconfined),
            *([(self.edit, "edit")] if self.edit else []),
        ]
        return [(call_id, kind) for call_id, kind in kinds if call_id != "all"]

    @property
    def ids(self) -> list[str]:
        return list(dict.fromkeys(call_id for call_id, _ in self.named))

    @property
    def everything(self) -> bool:
        return "all" in [*self.approve, *self.reject, *self.done]

    def without(self, gone: Sequence[str]) -> Asked:
        keep = [i for i in self.approve if i not in gone], [i for i in self.reject if i not in gone]
        return Asked(
            *keep,
            [i for i in self.done if i not in gone],
            [i for i in self.unconfined if i not in gone],
            None if self.edit in gone else self.edit,
        )


def _inbox(session: Session, asked: Asked, as_json: bool, output: OutputFormat) -> str | None:
    """List the inbox, or find the one thread the call ids named wait in (None: done)."""
    from agentcli.session.inbox import Expired, find, inbox

    expired: list[Expired] = []
    calls = inbox(session, expired)
    for item in expired:
        warn_expired(item.thread_id, item.review, session.settings.expire_after)
    if not asked.ids and not asked.everything:
        show_inbox(calls, as_json)
        return None
    if asked.everything:
        raise UsageError("'all' needs a thread: agentcli review --thread ID --approve all")
    threads: dict[str, None] = {}
    for call_id in asked.ids:
        found = find(calls, call_id)
        if len(found) > 1:
            where = ", ".join(call.thread_id for call in found)
            raise UsageError(
                f"call {call_id} is pending in {len(found)} threads ({where}):"
                f" name one with --thread ID"
            )
        threads.update({call.thread_id: None for call in found})
    if len(threads) > 1:
        raise UsageError(
            f"the calls named wait in different threads ({', '.join(threads)}):"
            " decide one thread at a time"
        )
    if not threads:  # none is pending: decided already, or never asked
        already_decided(session, asked.named, asked.ids, output, [], None)
        return None
    return next(iter(threads))


def _decisions(
    session: ThreadSession,
    pending: ReviewRequest,
    asked: Asked,
    message: str | None,
    args: str | None,
) -> list[Decision]:
    ids = [request["id"] for request in pending.action_requests]
    for call_id in asked.ids:
        if call_id not in ids:
            raise UsageError(f"no pending call '{call_id}' (pending: {', '.join(ids)})")
    decisions = []
    for request in pending.action_requests:
        call_id = request["id"]
        decision = _decision(session, request, asked, message, args)
        if call_id in asked.unconfined:
            if not request.get("sandbox") or decision["type"] != "approve":
                raise UsageError(
                    f"--unconfined {call_id}: only for a call that would run in the"
                    " sandbox (a shell command), and not with another decision for it"
                )
            decision = Decide.approve(unconfined=True, by=BY)
        decisions.append(decision)
    return decisions


def _decision(
    session: ThreadSession,
    request: dict[str, Any],
    asked: Asked,
    message: str | None,
    args: str | None,
) -> Decision:
    call_id = request["id"]
    if call_id == asked.edit:
        try:
            new_args = json.loads(args or "")
        except json.JSONDecodeError as exc:
            raise UsageError(f"--args is not valid JSON: {exc}") from None
        from agentcli.agent.review.answers import UNCHANGED  # only when an edit is checked

        problem = session.check_edit(request["name"], new_args, request["args"])
        if problem and problem != UNCHANGED:
            raise UsageError(f"--args for {call_id}: {problem}")
        if problem == UNCHANGED:  # the same values, defaults applied
            raise UsageError(
                f"--args for {call_id} are its arguments unchanged, which is no edit:"
                f" to run it as it is, use --approve {call_id}"
            )
        return Decide.edit(request["name"], new_args, by=BY)
    if call_id in asked.done or "all" in asked.done:
        if not request.get("rerun"):
            raise UsageError(f"--done is for a call cut off by a crash; {call_id} has not run yet")
        return Decide.done(by=BY)
    if call_id in asked.reject or "all" in asked.reject:
        return Decide.reject(message, by=BY)
    if call_id in asked.approve or "all" in asked.approve or call_id in asked.unconfined:
        return Decide.approve(by=BY)
    raise UsageError(f"call {call_id} has no decision: name it, or use 'all'")
