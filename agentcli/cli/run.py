"""`agentcli run` and `agentcli review`: scripted runs, decided by policy and flags, never a tty."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer

from agentcli.cli.common import (
    ApproveOpt,
    AutoApproveOpt,
    Common,
    DenyOpt,
    LastOpt,
    ThreadOpt,
    attach,
    common_options,
    open_session,
    server_flag,
)
from agentcli.errors import AgentcliError, UsageError
from agentcli.events import Done, Event, ReviewRequest
from agentcli.ui import make_console
from agentcli.ui.render import Renderer

if TYPE_CHECKING:
    from agentcli.cli.common import AnySession

EXIT_PARKED = 3


class OutputFormat(StrEnum):
    text = "text"
    json = "json"
    jsonl = "jsonl"


OutputOpt = Annotated[
    OutputFormat, typer.Option("--output", "-o", help="text, json (one object) or jsonl (events).")
]


@common_options(server=True)
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
    *,
    common: Common,
) -> None:
    """Run without a terminal: calls no policy allows park the thread (exit 3).

    With --thread and no message: decide pending calls by policy, or retry a failed call.
    """
    if message == "-":
        message = sys.stdin.read()
        if not message.strip():
            raise UsageError("no message on stdin")
    if message is None and thread is None and not last:
        raise UsageError("give a message, '-' to read it from stdin, or --thread ID to continue")
    session = open_session(
        common, auto_approve, approve, deny
    )
    attach(session, thread, last)
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
    message: Annotated[
        str | None, typer.Option("--message", help="With --reject: feedback for the model.")
    ] = None,
    edit: Annotated[
        str | None, typer.Option("--edit", metavar="CALL_ID", help="Edit a call.")
    ] = None,
    args: Annotated[
        str | None, typer.Option("--args", metavar="JSON", help="With --edit: new arguments.")
    ] = None,
    output: OutputOpt = OutputFormat.text,
    *,
    common: Common,
) -> None:
    """List a thread's pending calls, or decide them and continue like `run --thread ID`."""
    session = open_session(common)
    session.open(thread_id)
    pending = session.pending()
    if not (approve or reject or edit):
        _list_pending(pending, as_json)
        return
    if pending is None:
        raise UsageError(f"thread {session.thread_id} has no calls awaiting review")
    if (edit is None) != (args is None):
        raise UsageError("--edit CALL_ID and --args JSON go together")
    decisions = _decisions(session, pending, approve or [], reject or [], message, edit, args)
    Scripted(session, output).play(session.decide(decisions))


def _decisions(
    session: AnySession,
    pending: ReviewRequest,
    approve: list[str],
    reject: list[str],
    message: str | None,
    edit: str | None,
    args: str | None,
) -> list[dict[str, Any]]:
    ids = [request["id"] for request in pending.action_requests]
    for call_id in [*approve, *reject, *([edit] if edit else [])]:
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
            if problem := session.check_edit(request["name"], new_args):
                raise UsageError(f"--args for {call_id}: {problem}")
            edited = {"name": request["name"], "args": new_args}
            decisions.append({"type": "edit", "edited_action": edited})
        elif call_id in reject or "all" in reject:
            decisions.append({"type": "reject", **({"message": message} if message else {})})
        elif call_id in approve or "all" in approve:
            decisions.append({"type": "approve"})
        else:
            raise UsageError(f"call {call_id} has no decision: name it, or use 'all'")
    return [{**decision, "by": "agentcli review"} for decision in decisions]


def _list_pending(pending: ReviewRequest | None, as_json: bool) -> None:
    requests = pending.action_requests if pending else []
    if as_json:
        print(json.dumps([_pending_row(r) for r in requests], indent=2, ensure_ascii=False))
        return
    if not requests:
        print("no calls awaiting review")
    for request in requests:
        args = json.dumps(request["args"], ensure_ascii=False)
        note = f"  ({request.get('description')})" if request.get("rerun") else ""
        print(f"{request['id']}  {request['name']}  {args}{note}")


def _pending_row(request: dict[str, Any]) -> dict[str, Any]:
    row = {"call_id": request["id"], "tool": request["name"], "args": request["args"]}
    if request.get("rerun"):  # cut off by a crash: it may have partly run
        row["rerun"] = request["rerun"]
    return row


class Scripted:
    """Plays session events to stdout in the chosen format and exits with the contract's code."""

    def __init__(self, session: AnySession, output: OutputFormat) -> None:
        self.session = session
        self.output = output
        self.view = Renderer(make_console(), make_console(stderr=True))
        self.usage: dict[str, int] = {}

    def run(self, message: str | None) -> None:
        s = self.session
        if review := s.pending():
            decisions = s.policy_decisions(review)
            if decisions is None:
                self._park(review.action_requests)
            self.play(s.decide(decisions), final=message is None)
        if message is not None:
            self.play(s.send(message))
        elif review is None:
            self.play(s.resume())

    def play(self, events: Iterator[Event], *, final: bool = True) -> None:
        done: Done | None = None
        try:
            for event in events:
                if isinstance(event, Done):
                    done = event
                    for key, value in event.usage.items():
                        self.usage[key] = self.usage.get(key, 0) + value
                if self.output is OutputFormat.jsonl:
                    print(json.dumps(event.to_dict(), ensure_ascii=False), flush=True)
                elif self.output is OutputFormat.text:
                    self.view.show(event)
        except AgentcliError as exc:
            self.view.end_line()
            self._report("error", "", [], str(exc))
            raise
        assert done is not None, "a session run ends with Done"
        if done.status == "awaiting_approval":
            self._park(done.pending, done.final)
        if final:
            self._report(done.status, done.final, [])

    def _park(self, pending: list[dict[str, Any]], final: str = "") -> NoReturn:
        self._report("awaiting_approval", final, pending)
        raise typer.Exit(EXIT_PARKED)

    def _report(
        self, status: str, final: str, pending: list[dict[str, Any]], error: str = ""
    ) -> None:
        thread_id = self.session.thread_id
        if self.output is OutputFormat.json:
            result = {
                "thread_id": thread_id,
                "status": status,
                "final": final,
                "pending": [_pending_row(r) for r in pending],
                "usage": self.usage,
            }
            if error:
                result["error"] = error
            print(json.dumps(result, indent=2, ensure_ascii=False))
        elif self.output is OutputFormat.jsonl and error:
            print(json.dumps({"type": "error", "thread_id": thread_id, "message": error}))
        elif self.output is OutputFormat.text and pending:
            err = self.view.info
            err.print(
                f"waiting for review: {len(pending)} call(s) in thread {thread_id}", markup=False
            )
            for request in pending:
                err.print(
                    f"  {request['id']}  {request['name']}  {json.dumps(request['args'])}",
                    markup=False,
                )
            server = server_flag(self.session)
            err.print(
                f"decide with: agentcli review {thread_id}{server} --approve all"
                f"  (or: agentcli run --thread {thread_id}{server} --auto-approve)",
                markup=False,
            )
