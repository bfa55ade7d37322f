"""Plays a scripted run's events to stdout as text, JSON or JSON lines, with the contract's
exit codes: 3 when calls are left for review. Imported when `run` or `review` runs."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import TYPE_CHECKING, Any, NoReturn

import typer
from agentcli_tools.plurals import counted

from agentcli.cli import gc_tuning
from agentcli.cli.common_options import OutputFormat, warn, warn_if_clipped
from agentcli.decisions import Decision
from agentcli.errors import AgentcliError, ExitCode, UsageError
from agentcli.events import (
    Done,
    Event,
    HookDecision,
    ReviewRequest,
    RunStatus,
    Start,
    add_usage_value,
)
from agentcli.terminal_text import dumps, line
from agentcli.ui import make_console
from agentcli.ui.event_renderer import Renderer
from agentcli.ui.safe_text import safe_line

if TYPE_CHECKING:
    from agentcli.session.thread_session import ThreadSession


def list_pending(requests: list[dict[str, Any]], as_json: bool) -> None:
    """A thread's pending calls (each with its `digest`), as lines or JSON."""
    if as_json:
        print(dumps([_pending_row(r) for r in requests], indent=2))
        return
    if not requests:
        print("no calls awaiting review")
    for request in requests:
        args = json.dumps(request["args"], ensure_ascii=False)
        note = f"  ({request.get('description')})" if request.get("rerun") else ""
        note += f"  (cannot be undone: {request['undo']})" if request.get("undo") else ""
        note += f"  (hooks: {request['hook']})" if request.get("hook") else ""
        print(line(f"{_name(request)}  {request['name']}  {args}{note}"))


def _name(request: dict[str, Any]) -> str:
    """How `agentcli review` names the call: CALL_ID@DIGEST (call_digests.py)."""
    digest = request.get("digest")
    return f"{request['id']}@{digest}" if digest else str(request["id"])


def _pending_row(request: dict[str, Any]) -> dict[str, Any]:
    row = {
        "call_id": request["id"],
        **({"digest": request["digest"]} if request.get("digest") else {}),  # CALL_ID@DIGEST
        "tool": request["name"],
        "args": request["args"],
    }
    if request.get("rerun"):  # cut off by a crash: it may have partly run
        row["rerun"] = request["rerun"]
    if request.get("undo"):  # why undo could not take all of its changes back
        row["undo"] = request["undo"]
    if request.get("hook"):  # what the person's hooks said: a hook asked, failed or edited
        row["hook"] = request["hook"]
    if "plan_task" in request:  # a task of a plan under review: its number and deps
        row["plan_task"], row["deps"] = request["plan_task"], request.get("deps", [])
    return row


class Scripted:
    """Plays session events to stdout in the chosen format and exits with the contract's code."""

    def __init__(
        self,
        session: ThreadSession,
        output: OutputFormat,
        reports: list[dict[str, Any]] | None = None,
    ) -> None:
        self.session = session
        self.output = output
        self.reports = reports  # --output json of several runs: their objects, printed after
        self.view = Renderer(make_console(), make_console(stderr=True))
        self.usage: dict[str, int] = {}
        self.hooks: list[dict[str, Any]] = []  # what the person's hooks decided (-o json)
        self.started = False  # the jsonl start event is out
        self.unsent = False  # a message waits for calls decided first: say so if they park

    def run(self, message: str | None, plan: bool = False) -> None:
        s = self.session
        with self.failing():
            review = s.pending()
            decisions = s.policy_decisions(review) if review else None
        if review and decisions is None and message is not None:
            # nothing has happened yet: refuse the message, which the person still has
            server = s.hint_flags
            raise UsageError(
                f"thread {s.thread_id} has {counted(len(review.action_requests), 'call')} awaiting"
                f" review, so the message was not sent: decide them first"
                f" (agentcli review {s.thread_id}{server}), then run it again"
            )
        with self.failing():
            self.start()
            if review:
                if decisions is None:  # parked before: the calls have waited since then
                    self._park(review.action_requests, fresh=False)
                self.unsent = message is not None
                self.play(s.decide(decisions), final=message is None)
                self.unsent = False
            if message is not None:
                warn_if_clipped(message, "the message")
                self.play(s.send(message, plan=plan))
            elif review is None:
                self.play(s.resume())

    def answer(self, decisions: list[Decision]) -> None:
        """Play the run that `agentcli review`'s decisions continue."""
        with self.failing():
            self.play(self.session.decide(decisions))

    def start(self) -> None:
        """The jsonl start event, once, before any other line: the thread's id."""
        if not self.started and self.output is OutputFormat.jsonl:
            event = Start(self.session.thread_id, new=self.session.row is None)
            print(dumps(event.to_dict()), flush=True)
        self.started = True

    @contextmanager
    def failing(self) -> Iterator[None]:
        """A run that fails names the thread it leaves behind, whatever stopped it (an
        error, Ctrl-C, a stop signal): in its one error line on stderr, and as
        `thread_id` in --output json and jsonl."""
        try:
            yield
        except typer.Exit:  # parked (exit 3): reported already
            raise
        except AgentcliError as exc:
            self._failed(str(exc))
            exc.args = (self._naming(str(exc)),)
            raise
        except KeyboardInterrupt:
            self._failed("interrupted")
            print(f"agentcli: {self._naming('interrupted')}", file=sys.stderr, flush=True)
            raise
        except SystemExit as exc:  # a stop signal (agentcli.cli's handler): 128 + signal
            if not isinstance(exc.code, int) or exc.code <= 128:
                raise
            what = f"stopped by signal {exc.code - 128}"
            self._failed(what)
            print(f"agentcli: {self._naming(what)}", file=sys.stderr, flush=True)
            raise
        except Exception as exc:  # a bug: still one line, naming the thread
            what = f"unexpected {type(exc).__name__}: {exc} (--debug shows where)"
            self._failed(what)
            raise AgentcliError(self._naming(what)) from exc

    def _failed(self, message: str) -> None:
        self.view.end_line()
        self.start()
        self._report(RunStatus.ERROR, "", [], message)

    def _naming(self, message: str) -> str:
        """`message`, with the thread it leaves behind (if the run made or opened one)."""
        s = self.session
        if s.row is None or s.thread_id in message:
            return message
        hint = f"agentcli run --thread {s.thread_id}{s.hint_flags}"
        return f"{message} (thread {s.thread_id} kept: {hint} continues it)"

    def play(self, events: Iterator[Event], *, final: bool = True) -> None:
        done: Done | None = None
        self.start()
        for event in events:
            gc_tuning.ready()  # the run has begun: what start-up loaded is in memory
            if isinstance(event, ReviewRequest) and self.output is OutputFormat.jsonl:
                event = replace(event, action_requests=self._digested(event.action_requests))
            if isinstance(event, HookDecision):  # -o json lists them, as jsonl streams them
                self.hooks.append(event.to_dict())
            if isinstance(event, Done):
                if event.pending:  # the jsonl done event names them as review does
                    event = replace(event, pending=self._digested(event.pending))
                done = event
                for key, value in event.usage.items():
                    self.usage[key] = add_usage_value(key, self.usage.get(key), value)
            if self.output is OutputFormat.jsonl:
                print(dumps(event.to_dict()), flush=True)
            elif self.output is OutputFormat.text:
                self.view.show(event)
        assert done is not None, "a session run ends with Done"
        if done.status == RunStatus.AWAITING_APPROVAL:
            self._park(done.pending, done.final)
        if done.status == RunStatus.INCOMPLETE:  # the server cut the answer off: not done
            self._report(done.status, done.final, [])
            raise typer.Exit(ExitCode.ERROR)
        if final:
            self._report(done.status, done.final, [])

    def _park(self, pending: list[dict[str, Any]], final: str = "", fresh: bool = True) -> NoReturn:
        """Exit 3, after the report and the notify command. `fresh`: the calls were asked
        for in this run (they wait from now). Each call is shown with its digest, which
        names it in `agentcli review` (call_digests.py)."""
        pending = self._digested(pending)
        self._report(RunStatus.AWAITING_APPROVAL, final, pending)
        from agentcli.session.notify import NotifyEvent, notify, now, pending_document

        since = now() if fresh else None
        document = pending_document(NotifyEvent.PARKED, self.session, pending, since)
        if problem := notify(self.session.settings, document):
            warn(problem)
        if self.unsent:  # the calls decided first asked for more: the message waits
            warn(
                f"the message was not sent: thread {self.session.thread_id} waits for review"
                " again; run it again once the calls are decided"
            )
        raise typer.Exit(ExitCode.AWAITING_REVIEW)

    def _digested(self, pending: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The pending calls, each with its `digest` (read from the thread's audit once)."""
        if all(request.get("digest") for request in pending):
            return pending
        from agentcli.session.call_digests import with_digests

        return with_digests(self.session.thread_id, self.session.values(), pending)

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
                "hooks": [{k: v for k, v in h.items() if k != "type"} for h in self.hooks],
            }
            if error:
                result["error"] = error
            if self.reports is not None:
                self.reports.append(result)
            else:
                print(dumps(result, indent=2))
        elif self.output is OutputFormat.jsonl and error:
            print(dumps({"type": "error", "thread_id": thread_id, "message": error}))
        elif self.output is OutputFormat.text and pending:
            say = self.view.info.print
            say(
                safe_line(
                    f"waiting for review: {counted(len(pending), 'call')} in thread {thread_id}"
                )
            )
            for request in pending:
                args = json.dumps(request["args"], ensure_ascii=False)
                say(safe_line(f"  {_name(request)}  {request['name']}  {args}"))
            server = self.session.hint_flags
            say(
                safe_line(
                    f"decide with: agentcli review {thread_id}{server} --approve all"
                    f"  (or: agentcli run --thread {thread_id}{server} --auto-approve)"
                ),
                soft_wrap=True,  # a command to copy: never broken across lines
            )
