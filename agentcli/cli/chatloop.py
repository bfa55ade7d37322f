"""The interactive loop: read a message or a slash command, play the run, answer reviews."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from typing import TYPE_CHECKING, Any

from rich.text import Text

from agentcli.config import data_dir
from agentcli.errors import AgentcliError, Interrupted
from agentcli.events import Done, Event, ReviewRequest
from agentcli.model import cost_usd
from agentcli.ui import make_console
from agentcli.ui.input import MessageInput
from agentcli.ui.prompt import ask_decisions
from agentcli.ui.render import Renderer

if TYPE_CHECKING:
    from agentcli.cli.common import AnySession


class Chat:
    def __init__(self, session: AnySession) -> None:
        from agentcli.cli.slash import COMMANDS

        self.session = session
        session.soft_ctrl_c = True  # Ctrl-C stops a run and comes back here
        self.console = make_console()
        self.view = Renderer(self.console)
        self.input = MessageInput(data_dir() / "history", COMMANDS)
        self.leaving = False  # set by /exit

    def loop(self, message: str | None) -> None:
        from agentcli.cli.slash import run_command

        self.banner()
        self.console.print(Text("/help for commands, /exit or Ctrl-D to leave", style="dim"))
        try:
            if not self.answer_pending():
                return self.bye(pending=True)
            ctrl_c = False
            while not self.leaving:
                if message is None:
                    try:
                        message = self.input.read()
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
                elif not self.play(partial(self.session.send, text)):
                    return self.bye(pending=True)
        except KeyboardInterrupt:
            self.view.end()
            self.bye(pending=False)
            raise
        self.bye(pending=False)

    def banner(self) -> None:
        from agentcli.remote import RemoteSession

        s = self.session
        where = s.location if isinstance(s, RemoteSession) else s.workspace
        about = f"{s.row.title} · {where}" if s.row else f"new · {where}"
        line = Text.assemble((f"thread {s.thread_id}", "bold"), (f" · {about}", "dim"))
        self.console.print(line)

    def answer_pending(self) -> bool:
        """Show a review the thread was left at; False if the person quit at it."""
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
            self.console.print(Text(str(exc), style="yellow"))
        else:
            self.console.print(Text.assemble(("error: ", "red"), str(exc)))

    def bye(self, pending: bool) -> None:
        s = self.session
        if s.row is None:
            return
        from agentcli.cli.common import server_flag

        what = "calls are waiting for review" if pending else "to continue"
        hint = f"agentcli resume {s.thread_id}{server_flag(s)}"
        self.console.print(Text(f"{what}: {hint}", style="dim"))
