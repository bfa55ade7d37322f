"""The interactive loop: read a message or a slash command, play the run, answer reviews."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from rich.text import Text

from agentcli.config import data_dir
from agentcli.errors import AgentcliError, Interrupted
from agentcli.events import Done, Event, ReviewRequest
from agentcli.model import cost_usd
from agentcli.ui import make_console
from agentcli.ui.input import MessageInput
from agentcli.ui.safe import safe, styled

if TYPE_CHECKING:
    from agentcli.cli.common import AnySession
    from agentcli.cli.starting import Starting
    from agentcli.ui.render import Renderer


class Chat:
    def __init__(self, starting: Starting) -> None:
        from agentcli.cli.slash import COMMANDS

        self.starting = starting
        self._session: AnySession | None = None
        self.console = make_console()
        self.input = MessageInput(data_dir() / "history", COMMANDS)
        starting.on_failure(self.input.stop)  # a session that cannot be made ends the prompt
        self.leaving = False  # set by /exit
        self.reviewed = False  # the thread's pending calls, if any, have been shown

    @functools.cached_property
    def view(self) -> Renderer:
        """Made when first needed: Rich's Markdown and Syntax are not needed for the prompt."""
        from agentcli.ui.render import Renderer

        return Renderer(self.console)

    @property
    def session(self) -> AnySession:
        """The session, made in the background since launch: wait for it if need be."""
        if self._session is None:
            if not self.starting.future.done():
                self.view.begin("starting")
            try:
                session = self.starting.session()
            except KeyboardInterrupt:  # back to the prompt, as Ctrl-C during a run does
                raise Interrupted("interrupted while agentcli was starting: nothing sent") from None
            finally:
                self.view.end()
            session.soft_ctrl_c = True  # Ctrl-C stops a run and comes back here
            from agentcli.cli.starting import show_warnings

            show_warnings(session)
            self._session = session
        return self._session

    def loop(self, message: str | None) -> None:
        from agentcli.cli.slash import run_command

        self.banner()
        self.console.print(Text("/help for commands, /exit or Ctrl-D to leave", style="dim"))
        try:
            if self.starting.awaiting and not self.answer_pending():
                return self.bye(pending=True)
            ctrl_c = False
            while not self.leaving:
                if message is None:
                    try:
                        message = self.input.read(drawn=self.starting.begin)
                    except EOFError:
                        self.console.print()
                        break
                    except KeyboardInterrupt:  # a second Ctrl-C in a row leaves (130)
                        if ctrl_c:
                            raise
                        ctrl_c = True
                        self.console.print(Text("(Ctrl-C again, /exit or Ctrl-D to leave)", "dim"))
                        continue
                ctrl_c = False
                text, message = message.strip(), None
                if not text:
                    continue
                if text.startswith("/"):
                    if not run_command(self, text):
                        return self.bye(pending=True)
                elif not self.send(text):
                    return self.bye(pending=True)
        except KeyboardInterrupt:
            self.view.end()
            self.bye(pending=False)
            raise
        self.bye(pending=False)

    def banner(self) -> None:
        if self.starting.future.done() and not self.starting.future.exception():
            s = self.session  # made already (a server's): it knows best
            where, title = _where(s), s.row.title if s.row else None
        else:
            where, title = self.starting.where, self.starting.title
        about = f"{title} · {where}" if title is not None else f"new · {where}"
        line = styled((f"thread {self.starting.thread_id}", "bold"), (f" · {about}", "dim"))
        self.console.print(line)

    def send(self, text: str) -> bool:
        """Play a message; calls the thread was left waiting on are shown first (the index
        said there were none, but it is only an index)."""
        try:
            if not self.reviewed and not self.answer_pending():
                return False
        except Interrupted as exc:  # Ctrl-C while the session was being made
            self.error(exc)
            return True
        return self.play(lambda: self.session.send(text))

    def answer_pending(self) -> bool:
        """Show a review the thread was left at; False if the person quit at it."""
        self.reviewed = True
        review = self.session.pending()
        if review is None:
            return True
        answer = self.answer(review)
        return answer is not None and self.play(lambda: answer)

    def play(self, start: Callable[[], Iterator[Event]]) -> bool:
        """Render a run, answering reviews as they come; False if the person quit at one."""
        events: Iterator[Event] | None = None
        spent: dict[str, Any] = {}  # over the whole turn, reviews included
        while True:
            review, done = None, None
            self.view.begin("thinking" if events is None else "working")
            try:
                for event in events or start():
                    review = event if isinstance(event, ReviewRequest) else review
                    done = event if isinstance(event, Done) else done
                    self.view.show(event)
            except AgentcliError as exc:
                self.error(exc)
                return True
            finally:
                self.view.end()
            for key, value in (done.usage if done else {}).items():
                spent[key] = spent.get(key, 0) + value
            if review is None:
                self.show_usage(spent)
                return True
            events = self.answer(review)
            if events is None:
                return False

    def answer(self, review: ReviewRequest) -> Iterator[Event] | None:
        s = self.session
        decisions = s.policy_decisions(review)
        if decisions is None:
            from agentcli.ui.prompt import ask_decisions

            decisions = ask_decisions(self.console, review, s.check_edit, s.workspace)
            if decisions is None:
                return None
            decisions = [{**decision, "by": "terminal"} for decision in decisions]
        return s.decide(decisions)

    def show_usage(self, usage: dict[str, Any]) -> None:
        if not usage.get("total_tokens"):
            return
        row = self.session.store.resolve(self.session.thread_id)
        total = {"input_tokens": row.input_tokens, "output_tokens": row.output_tokens}
        line = f"{usage['input_tokens']:,} in · {usage['output_tokens']:,} out"
        if "cost_usd" in usage:
            line += f" · ${usage['cost_usd']:.4f}"
        line += f"  (thread: {row.input_tokens + row.output_tokens:,} tokens"
        spent = cost_usd(self.session.settings, self.session.settings.model, total)
        line += f" · ${spent:.4f})" if spent is not None else ")"
        self.console.print(Text(line, style="dim"))

    def error(self, exc: AgentcliError) -> None:
        self.view.end()
        if isinstance(exc, Interrupted):
            self.console.print(safe(str(exc), style="yellow"))
        else:
            self.console.print(styled(("error: ", "red"), (str(exc), ""), multiline=True))

    def bye(self, pending: bool) -> None:
        s = self._session
        if s is None:  # left before the session was needed: the thread is as it was
            if self.starting.title is None:
                return
            thread_id, server = self.starting.thread_id, ""
        else:
            if s.row is None:
                return
            from agentcli.cli.common import server_flag

            thread_id, server = s.thread_id, server_flag(s)
        what = "calls are waiting for review" if pending else "to continue"
        hint = f"agentcli resume {thread_id}{server}"
        self.console.print(styled((f"{what}: {hint}", "dim")))


def _where(session: AnySession) -> str:
    from agentcli.remote import RemoteSession

    return session.location if isinstance(session, RemoteSession) else str(session.workspace)
