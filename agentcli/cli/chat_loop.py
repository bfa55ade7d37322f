"""The interactive loop: read a message or a slash command, play the run, answer reviews."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentcli_tools.plurals import counted
from rich.text import Text

from agentcli.cli.bang_command import ShellRun, is_command
from agentcli.cli.common_options import warn_if_clipped
from agentcli.cli.ctrl_c import stopping
from agentcli.cli.outgoing_message import outgoing
from agentcli.cli.review_alarm import ReviewAlarm
from agentcli.config import data_dir
from agentcli.decisions import Decide, Decision
from agentcli.errors import AgentcliError, Interrupted, UsageError
from agentcli.events import Done, EgressQuestion, Event, ReviewRequest, add_usage_value
from agentcli.ui import make_console
from agentcli.ui.message_input import MessageInput
from agentcli.ui.safe_text import safe, styled

if TYPE_CHECKING:
    from agentcli.cli.early_prompt import Starting
    from agentcli.cli.early_review import EarlyReview
    from agentcli.session.thread_session import ThreadSession
    from agentcli.ui.event_renderer import Renderer
    from agentcli.ui.review_keys import HeldChoice


class Chat:
    def __init__(self, starting: Starting) -> None:
        from agentcli.cli.slash_commands import COMMANDS

        self.starting = starting
        self._session: ThreadSession | None = None
        self.console = make_console()
        self.input = MessageInput(data_dir() / "history", COMMANDS, lambda: self.workspace)
        starting.on_failure(self.input.stop)  # a session that cannot be made ends the prompt
        self.leaving = False  # set by /exit
        self.reviewed = False  # the thread's pending calls, if any, have been shown
        self.waiting: ReviewRequest | None = None  # a review left with q: its calls wait
        self.shell_runs: list[ShellRun] = []  # `!command` output for the next message
        self.alarms = ReviewAlarm(self.console)  # a review waiting: the bell, notify
        self.draft = ""  # a message that was not sent: the next prompt starts with it
        self.mode = starting.mode  # the approval mode: /mode changes it
        self.early: EarlyReview | None = None  # resume: the review drawn from the index

    @property
    def planning(self) -> bool:
        """Mode plan (--mode plan, chat --plan): every message asks for a plan."""
        return self.mode == "plan"

    @functools.cached_property
    def view(self) -> Renderer:
        """Made when first needed: Rich's Markdown and Syntax are not needed for the prompt."""
        from agentcli.ui.event_renderer import Renderer

        view = Renderer(self.console, keep=True)  # /show shows a folded result whole
        view.defer_calls = True  # a call a person reviews is shown once, by its panel
        return view

    @property
    def session(self) -> ThreadSession:
        """The session, made in the background since launch: wait for it if need be."""
        if self._session is None:
            held = self.early.held if self.early is not None else None
            try:  # Ctrl-C while the status line is being drawn is the same Ctrl-C
                if not self.starting.future.done() and held is None:
                    self.view.begin("starting")
                session = self.starting.session()
            except KeyboardInterrupt:  # back to the prompt, as Ctrl-C during a run does
                raise Interrupted("interrupted while agentcli was starting: nothing sent") from None
            finally:
                self.view.end()
            session.soft_ctrl_c = True  # Ctrl-C stops a run and comes back here
            session.asks_egress = True  # a host not listed is a question (ask_network)
            from agentcli.cli.early_prompt import fixed_part_line, show_warnings

            line = fixed_part_line(session)  # the header's last line, once known
            if held is not None and (line or getattr(session, "warnings", None)):
                held.interrupt()  # below the drawn choice, which is drawn again
            show_warnings(session)
            if line:
                self.console.print(
                    Text(f"context: {line[0]}", style="yellow" if line[1] else "dim")
                )
            self._session = session
        return self._session

    def loop(self, message: str | None) -> None:
        from agentcli.cli.continuing import continues, show_recap
        from agentcli.cli.early_review import early_review
        from agentcli.cli.slash_commands import run_command

        self.banner()
        if continues(self.starting):  # resume: the last exchanges first
            self.early = early_review(self.starting, message)
            # drawn from the index, checked before a key counts
            if self.early is not None and not self.early.recap(
                self.console, self.starting.thread_id
            ):
                self.early.drop(self.console)
                self.early = None
            if self.early is None:
                show_recap(self)
        self.console.print(Text("/help for commands, /exit or Ctrl-D to leave", style="dim"))
        if message is not None and message.strip():  # from the command line: shown as typed
            self.console.print(styled("you> ", (message.strip(), ""), multiline=True))
        try:
            if self.early is not None:
                if self.early.panel(self.console, self.workspace):
                    self.starting.begin()  # the session is made while the person reads
                else:
                    self.early.drop(self.console)
                    self.early = None
                    show_recap(self)
            if self.starting.awaiting and not self.answer_pending(self.early):
                return self.bye(pending=True)
            while not self.leaving:
                if message is None:
                    draft, self.draft = self.draft, ""
                    try:  # KeyboardInterrupt: Ctrl-C twice on an empty prompt leaves (130)
                        message = self.input.read(drawn=self.starting.begin, default=draft)
                    except EOFError:
                        self.console.print()
                        return self.bye(pending=self.left_waiting() is not None)
                text, message = message.strip(), None
                if not text:
                    continue
                if text.startswith("/"):
                    if not run_command(self, text):
                        return self.bye(pending=True)
                elif is_command(text):
                    self.shell(text[1:].strip())
                elif not self.send(text):
                    return self.bye(pending=True)
        except KeyboardInterrupt:
            self.view.end()
            self.bye(pending=False)
            raise
        finally:
            if self.early is not None:  # an error before its choice was read or dropped
                self.early.release()
        self.bye(pending=self.left_waiting() is not None)

    def banner(self) -> None:
        """The current thread: after /new or /switch the session's, not the one started on."""
        if self.starting.future.done() and not self.starting.future.exception():
            s = self.session  # made already (a server's, or after /new or /switch): it knows
            thread_id, where, title = s.thread_id, _where(s), s.row.title if s.row else None
        else:
            starting = self.starting
            thread_id, where, title = starting.thread_id, starting.where, starting.title
        about = f"{title} · {where}" if title is not None else f"new · {where}"
        line = styled(
            (f"thread {thread_id}", "bold"), (f" · {about} · ", "dim"), (f"mode {self.mode}", "")
        )
        if waiting := self.left_waiting():
            count = len(waiting.action_requests)
            line.append(f" · {counted(count, 'call')} waiting for review", "bold yellow")
        self.console.print(line, soft_wrap=True)
        if waiting:
            self.console.print(Text(WAITING_HINT, style="dim"))

    def left_waiting(self) -> ReviewRequest | None:
        """The review this thread was left at with q (its calls still wait), if any."""
        waiting = self.waiting
        if waiting is None or self._session is None:
            return None
        return waiting if waiting.thread_id == self._session.thread_id else None

    @property
    def workspace(self) -> Path:
        """Where `!command` runs and `@path` is read: the session's workspace."""
        if self._session is not None and self._session.workspace is not None:
            return self._session.workspace
        return Path(self.starting.where or ".").resolve()

    def shell(self, command: str) -> None:
        """`!command`: run it as the person, show its output, keep it for the next message."""
        from agentcli.cli.bang_command import run_shown

        try:
            ran = run_shown(self.console, command, self.workspace)
        except OSError as exc:
            self.error(UsageError(f"cannot run the command: {exc.strerror or exc}"))
            return
        if ran is not None:
            self.shell_runs.append(ran)

    def send(self, text: str, plan: bool | None = None) -> bool:
        """Play a message (with the files its `@path`s name and the `!command` output kept);
        calls the thread was left waiting on are shown first (the index said there were
        none, but it is only an index). `plan`: in plan mode (default: chat --plan's)."""
        try:
            if not self.reviewed:
                if not self.answer_pending():
                    return False
                if self.left_waiting():  # quit at calls not seen before: nothing decided
                    self.console.print(Text("(your message was not sent)", style="yellow"))
                    return True
        except Interrupted as exc:  # Ctrl-C while the session was being made
            self.error(exc)
            self.keep_draft(text)
            return True
        try:  # once the session is made: reading a file loads what the tools need
            text = outgoing(self.console, text, self.workspace, self.shell_runs)
        except UsageError as exc:
            self.error(exc)
            return True
        self.shell_runs = []
        if self.left_waiting() and (waiting := self.session.pending()) is not None:
            count = len(waiting.action_requests)
            said = f"{count} waiting call{'s' * (count != 1)} rejected, your message as feedback"
            self.console.print(Text(said, style="dim"))
            self.waiting = None
            return self.play(lambda: self.session.decide(instead(waiting, text)))
        planned = self.planning if plan is None else plan
        warn_if_clipped(text, "your message")
        return self.play(lambda: self.session.send(text, plan=planned))

    def keep_draft(self, text: str) -> None:
        """A message that was not sent is not lost: at a terminal the next prompt starts
        with it (Enter sends it); elsewhere it is printed, to copy."""
        from agentcli.ui.message_input import prefills

        if prefills():
            self.draft = text
            self.console.print(Text("(your message is back at the prompt)", style="dim"))
        else:
            self.console.print(styled(("not sent: ", "dim"), (text, ""), multiline=True))

    def answer_pending(self, early: EarlyReview | None = None) -> bool:
        """Show a review the thread was left at (q at it: back to the prompt, the calls
        waiting); False if the person left the chat at it (Ctrl-D). `early`: its first
        panel drawn already from the index, used only if the thread's state draws the same
        (cli/early_review.py)."""
        from agentcli.cli.continuing import show_recap

        self.reviewed = True
        try:
            review = self.session.pending()
            self.waiting = None
            if early is not None and not early.holds(self.session, review):
                early.drop(self.console)
                self.early = early = None
                show_recap(self)
            if review is None:
                return True
            held = early.held if early is not None else None
            answer = self.answer(review, held)  # sets `waiting` once its panel is drawn
        except EOFError:
            return False
        finally:  # however it ended: start-up goes on (the model client, gc_tuning.ready)
            if early is not None:
                early.release()  # the terminal as it was, if the drawn choice was not read
            self.early = None
            self.starting.waiting.set()
        if answer is None:
            self.left(review)
            return True
        return self.play(lambda: answer)

    def left(self, review: ReviewRequest) -> None:
        """q, Esc or Ctrl-C at a review: back to the prompt, the calls waiting (the header
        says so), decided by the next message or /review."""
        self.waiting = review
        self.banner()

    def play(self, start: Callable[[], Iterator[Event]]) -> bool:
        """Render a run, answering reviews as they come; False if the person quit at one."""
        events: Iterator[Event] | None = None
        spent: dict[str, Any] = {}  # over the whole turn, reviews included
        while True:
            review, done = None, None
            self.view.begin("thinking" if events is None else "working")
            try:
                with stopping(getattr(self.session, "stop", None)):  # Ctrl-C stops the run
                    for event in events or start():
                        review = event if isinstance(event, ReviewRequest) else review
                        done = event if isinstance(event, Done) else done
                        if isinstance(event, EgressQuestion):
                            self.ask_network(event)
                            continue
                        self.view.show(event)
            except AgentcliError as exc:
                self.error(exc)
                return True
            finally:
                self.view.end()
            for key, value in (done.usage if done else {}).items():
                spent[key] = add_usage_value(key, spent.get(key), value)
            if review is None:
                self.show_usage(spent)
                return True
            try:
                events = self.answer(review)
            except EOFError:  # Ctrl-D at the review: leave the chat
                return False
            if events is None:
                self.left(review)
                return True

    def answer(
        self, review: ReviewRequest, held: HeldChoice | None = None
    ) -> Iterator[Event] | None:
        """The run that goes on from the review's answer; None if the person left it."""
        from agentcli.cli.review_answer import review_decisions

        drawn = self.starting.waiting.set  # the model client may load once a panel is up
        decisions = review_decisions(
            self.session, review, self.console, self.view, self.alarms, drawn, held
        )
        return None if decisions is None else self.session.decide(decisions)

    def ask_network(self, question: EgressQuestion) -> None:
        """A running command's egress proxy asks about a host not listed: the live view
        pauses for the question (the call it runs in said first), then goes on."""
        from agentcli.ui.egress_prompt import ask_egress

        self.view.end()
        self.view.say_calls()
        try:
            ask_egress(self.console, question, self.session)
        finally:
            self.view.begin("working")

    def show_usage(self, usage: dict[str, Any]) -> None:
        from agentcli.cli.usage_line import usage_line

        if line := usage_line(self.session, usage):
            self.console.print(Text(line, style="dim"))

    def error(self, exc: AgentcliError) -> None:
        self.view.end()
        if isinstance(exc, Interrupted):
            self.console.print(safe(str(exc), style="yellow"))
        else:
            self.console.print(styled(("error: ", "red"), (str(exc), ""), multiline=True))

    def bye(self, pending: bool) -> None:
        s = self._session
        if s is not None and s.stopping():  # else its call would be left cut off
            self.console.print(styled(("waiting for the stopped run to end", "dim")))
            with suppress(Interrupted):  # Ctrl-C again: leave now
                s.wait_stopped()
        if s is None:  # left before the session was needed: the thread is as it was
            if self.starting.title is None:
                return
            thread_id, server = self.starting.thread_id, self.starting.hint_flags
        else:
            if s.row is None:
                return
            thread_id, server = s.thread_id, s.hint_flags
        what = "calls are waiting for review" if pending else "to continue"
        hint = f"agentcli resume {thread_id}{server}"
        self.console.print(styled((f"{what}: {hint}", "dim")), soft_wrap=True)  # to copy


WAITING_HINT = (
    "/review decides them; a message instead rejects them and goes to the model as feedback"
)


def instead(review: ReviewRequest, text: str) -> list[Decision]:
    """A message sent while calls wait: each rejected, with the message as its feedback
    (what `f` sends), by the person at the terminal."""
    return [Decide.reject(text, by="terminal") for _ in review.action_requests]


def _where(session: ThreadSession) -> str:
    return session.location
