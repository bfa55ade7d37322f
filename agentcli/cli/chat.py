"""`agentcli chat` and `agentcli resume`: the interactive session."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.text import Text

from agentcli.cli.common import (
    ApproveOpt,
    AutoApproveOpt,
    BaseUrlOpt,
    Common,
    ConfigOpt,
    DbOpt,
    DenyOpt,
    LastOpt,
    ModelOpt,
    ThreadOpt,
    WorkspaceOpt,
    attach,
    open_session,
)
from agentcli.errors import AgentcliError
from agentcli.events import Event, ReviewRequest
from agentcli.ui.prompt import ask_decisions
from agentcli.ui.render import Renderer

if TYPE_CHECKING:
    from agentcli.session import Session

EXIT_WORDS = {"/exit", "/quit"}
MessageArg = Annotated[str | None, typer.Argument(help="First message (else you are asked).")]


def chat(
    message: MessageArg = None,
    thread: ThreadOpt = None,
    last: LastOpt = False,
    auto_approve: AutoApproveOpt = False,
    approve: ApproveOpt = None,
    deny: DenyOpt = None,
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
    db: DbOpt = None,
    config: ConfigOpt = None,
    workspace: WorkspaceOpt = None,
) -> None:
    """Talk with the agent; every tool call waits for your decision."""
    session = open_session(
        Common(model, base_url, db, config, workspace), auto_approve, approve, deny
    )
    attach(session, thread, last)
    Chat(session).loop(message)


def resume(
    thread_id: Annotated[
        str | None,
        typer.Argument(metavar="[ID]", help="Thread id or prefix (default: the latest here)."),
    ] = None,
    message: MessageArg = None,
    auto_approve: AutoApproveOpt = False,
    approve: ApproveOpt = None,
    deny: DenyOpt = None,
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
    db: DbOpt = None,
    config: ConfigOpt = None,
    workspace: WorkspaceOpt = None,
) -> None:
    """Continue a thread; a pending review is shown first."""
    session = open_session(
        Common(model, base_url, db, config, workspace), auto_approve, approve, deny
    )
    attach(session, thread_id, thread_id is None)
    Chat(session).loop(message)


class Chat:
    def __init__(self, session: Session) -> None:
        self.session = session
        self.console = Console(highlight=False)
        self.view = Renderer(self.console)

    def loop(self, message: str | None) -> None:
        s, console = self.session, self.console
        if s.row:
            about = f"{s.row.title} · {s.workspace}"
        else:
            about = f"new · {s.workspace}"
        console.print(Text.assemble((f"thread {s.thread_id}", "bold"), (f" · {about}", "dim")))
        console.print("[dim]/exit or Ctrl-D to leave, /retry after an error[/dim]")
        try:
            if review := s.pending():
                answer = self._answer(review)
                if answer is None or not self._play(answer):
                    return self._bye(pending=True)
            while True:
                if message is None:
                    try:
                        message = console.input("[bold cyan]you>[/bold cyan] ")
                    except EOFError:
                        console.print()
                        break
                text, message = message.strip(), None
                if text in EXIT_WORDS:
                    break
                if not text:
                    continue
                try:
                    events = s.resume() if text == "/retry" else s.send(text)
                except AgentcliError as exc:
                    self._error(exc)
                    continue
                if not self._play(events):
                    return self._bye(pending=True)
        except KeyboardInterrupt:
            self.view.end_line()
            self._bye(pending=False)
            raise
        self._bye(pending=False)

    def _play(self, events: Iterator[Event]) -> bool:
        """Render a run, answering reviews as they come; False if the person quit at one."""
        while True:
            review = None
            try:
                for event in events:
                    if isinstance(event, ReviewRequest):
                        review = event
                    self.view.show(event)
            except AgentcliError as exc:
                self._error(exc)
                return True
            if review is None:
                return True
            answer = self._answer(review)
            if answer is None:
                return False
            events = answer

    def _error(self, exc: AgentcliError) -> None:
        self.view.end_line()
        self.console.print(Text.assemble(("error: ", "red"), str(exc)))

    def _answer(self, review: ReviewRequest) -> Iterator[Event] | None:
        s = self.session
        decisions = s.policy_decisions(review)
        if decisions is None:
            decisions = ask_decisions(self.console, review, s.check_edit, s.workspace)
            if decisions is None:
                return None
            decisions = [{**decision, "by": "terminal"} for decision in decisions]
        return s.decide(decisions)

    def _bye(self, pending: bool) -> None:
        s = self.session
        if s.row is None:
            return
        what = "calls are waiting for review" if pending else "to continue"
        self.console.print(f"[dim]{what}: agentcli resume {s.thread_id}[/dim]")
