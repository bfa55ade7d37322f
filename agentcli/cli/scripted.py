"""Plays a scripted run's events to stdout as text, JSON or JSON lines, with the contract's
exit codes: 3 when calls are left for review. Imported when `run` or `review` runs."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, NoReturn

import typer

from agentcli.cli import gcpolicy
from agentcli.cli.common import server_flag
from agentcli.cli.run import OutputFormat
from agentcli.errors import AgentcliError
from agentcli.events import Done, Event, ReviewRequest
from agentcli.ui import make_console
from agentcli.ui.render import Renderer
from agentcli.ui.safe import safe_line
from agentcli.visible import dumps, line

if TYPE_CHECKING:
    from agentcli.cli.common import AnySession

EXIT_PARKED = 3


def list_pending(pending: ReviewRequest | None, as_json: bool) -> None:
    requests = pending.action_requests if pending else []
    if as_json:
        print(dumps([_pending_row(r) for r in requests], indent=2))
        return
    if not requests:
        print("no calls awaiting review")
    for request in requests:
        args = json.dumps(request["args"], ensure_ascii=False)
        note = f"  ({request.get('description')})" if request.get("rerun") else ""
        print(line(f"{request['id']}  {request['name']}  {args}{note}"))


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
                gcpolicy.ready()  # the run has begun: what start-up loaded is in memory
                if isinstance(event, Done):
                    done = event
                    for key, value in event.usage.items():
                        self.usage[key] = self.usage.get(key, 0) + value
                if self.output is OutputFormat.jsonl:
                    print(dumps(event.to_dict()), flush=True)
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
            print(dumps(result, indent=2))
        elif self.output is OutputFormat.jsonl and error:
            print(dumps({"type": "error", "thread_id": thread_id, "message": error}))
        elif self.output is OutputFormat.text and pending:
            say = self.view.info.print
            say(safe_line(f"waiting for review: {len(pending)} call(s) in thread {thread_id}"))
            for request in pending:
                args = json.dumps(request["args"], ensure_ascii=False)
                say(safe_line(f"  {request['id']}  {request['name']}  {args}"))
            server = server_flag(self.session)
            say(
                safe_line(
                    f"decide with: agentcli review {thread_id}{server} --approve all"
                    f"  (or: agentcli run --thread {thread_id}{server} --auto-approve)"
                )
            )
