"""`agentcli run` and `agentcli review`: scripted runs, decided by policy and flags, never a tty."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated

import typer

from agentcli.cli.common_options import (
    ApproveOpt,
    AutoApproveOpt,
    Common,
    DenyOpt,
    LastOpt,
    OutputFormat,
    SandboxOpt,
    ThreadOpt,
    attach,
    check_early,
    common_options,
    open_session,
)
from agentcli.decisions import Decide, Decision
from agentcli.errors import UsageError

if TYPE_CHECKING:
    from agentcli.events import ReviewRequest
    from agentcli.session.thread_session import ThreadSession


BY = "agentcli review"  # who decided, in the audit

OutputOpt = Annotated[
    OutputFormat, typer.Option("--output", "-o", help="text, json (one object) or jsonl (events).")
]


@common_options(server=True, requests=True)
def run(
    message: Annotated[
        str | None, typer.Argument(help="The message; '-' reads it from stdin.", show_default=False)
    ] = None,
    thread: ThreadOpt = None,
    last: LastOpt = False,
    output: OutputOpt = OutputFormat.text,
    auto_approve: AutoApproveOpt = False,
    approve: ApproveOpt = None,
    deny: DenyOpt = None,
    sandbox: SandboxOpt = None,
    *,
    common: Common,
) -> None:
    """Run without a terminal: calls no policy allows park the thread (exit 3).

    With --thread and no message: decide pending calls by policy, or retry a failed call.
    A message for a thread whose calls wait for a person is refused (exit 2): decide them
    first with `agentcli review ID`. A failed run names the thread it leaves behind;
    --output jsonl starts with a `start` event that carries the thread id.
    """
    if message == "-":
        message = sys.stdin.read()
        if not message.strip():
            raise UsageError("no message on stdin (the input was empty)")
    elif message is not None and not message.strip():
        raise UsageError("the message is empty: give some text, or '-' to read it from stdin")
    if message is None and thread is None and not last:
        raise UsageError("give a message, '-' to read it from stdin, or --thread ID to continue")
    common.sandbox = sandbox
    check_early(common, common.settings(), approve, deny)
    session = open_session(common, auto_approve, approve, deny)
    attach(session, thread, last)
    from agentcli.cli.run_output import Scripted

    Scripted(session, output).run(message)


@common_options(server=True)
def review(
    thread_id: Annotated[str, typer.Argument(metavar="ID", help="Thread id or unique prefix.")],
    as_json: Annotated[bool, typer.Option("--json", help="List pending calls as JSON.")] = False,
    approve: Annotated[
        list[str] | None, typer.Option("--approve", metavar="CALL_ID|all", help="Approve a call.")
    ] = None,
    reject: Annotated[
        list[str] | None, typer.Option("--reject", metavar="CALL_ID|all", help="Reject a call.")
    ] = None,
    done: Annotated[
        list[str] | None,
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
        list[str] | None,
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
    """List a thread's pending calls, or decide them and continue like `run --thread ID`."""
    if message is not None and not reject:
        raise UsageError("--message is feedback for rejected calls: it goes with --reject")
    session = open_session(common)
    session.open(thread_id)
    pending = session.pending()
    from agentcli.cli.run_output import Scripted, list_pending

    if not (approve or reject or edit or done or unconfined):
        list_pending(pending, as_json)
        return
    if pending is None:
        raise UsageError(f"thread {session.thread_id} has no calls awaiting review")
    if (edit is None) != (args is None):
        raise UsageError("--edit CALL_ID and --args JSON go together")
    decisions = _decisions(
        session,
        pending,
        approve or [],
        reject or [],
        message,
        edit,
        args,
        done or [],
        unconfined or [],
    )
    for index, request in enumerate(pending.action_requests):
        if request["id"] in (unconfined or []):
            if not request.get("sandbox") or decisions[index]["type"] != "approve":
                raise UsageError(
                    f"--unconfined {request['id']}: only for a call that would run in the"
                    " sandbox (a shell command), and not with another decision for it"
                )
            decisions[index] = Decide.approve(unconfined=True, by=BY)
    Scripted(session, output).answer(decisions)


def _decisions(
    session: ThreadSession,
    pending: ReviewRequest,
    approve: list[str],
    reject: list[str],
    message: str | None,
    edit: str | None,
    args: str | None,
    done: Sequence[str] = (),
    unconfined: Sequence[str] = (),
) -> list[Decision]:
    ids = [request["id"] for request in pending.action_requests]
    for call_id in [*approve, *reject, *done, *unconfined, *([edit] if edit else [])]:
        if call_id != "all" and call_id not in ids:
            raise UsageError(f"no pending call '{call_id}' (pending: {', '.join(ids)})")
    decisions = []
    for request in pending.action_requests:
        call_id = request["id"]
        if call_id == edit:
            try:
                new_args = json.loads(args or "")
            except json.JSONDecodeError as exc:
                raise UsageError(f"--args is not valid JSON: {exc}") from None
            from agentcli.agent.review.answers import (
                UNCHANGED,  # LangChain: only when an edit is checked
            )

            problem = session.check_edit(request["name"], new_args, request["args"])
            if problem and problem != UNCHANGED:
                raise UsageError(f"--args for {call_id}: {problem}")
            if problem == UNCHANGED:  # the same values, defaults applied
                raise UsageError(
                    f"--args for {call_id} are its arguments unchanged, which is no edit:"
                    f" to run it as it is, use --approve {call_id}"
                )
            decisions.append(Decide.edit(request["name"], new_args, by=BY))
        elif call_id in done or "all" in done:
            if not request.get("rerun"):
                raise UsageError(
                    f"--done is for a call cut off by a crash; {call_id} has not run yet"
                )
            decisions.append(Decide.done(by=BY))
        elif call_id in reject or "all" in reject:
            decisions.append(Decide.reject(message, by=BY))
        elif call_id in approve or "all" in approve or call_id in unconfined:
            decisions.append(Decide.approve(by=BY))
        else:
            raise UsageError(f"call {call_id} has no decision: name it, or use 'all'")
    return decisions
