"""Reading the person's message: line editing, persistent history, multi-line, completion.

At a terminal this is prompt_toolkit: Enter sends, Esc then Enter (or Alt-Enter) starts a
new line, a paste keeps its newlines, Tab completes slash commands and `@path`s (files in
the workspace), Up recalls history
(kept in the data folder), Ctrl-C clears the draft; on an empty prompt it says how to
leave, and a second Ctrl-C within LEAVE_S with nothing typed in between leaves (read()
raises KeyboardInterrupt). Without a terminal it reads plain lines.
"""

from __future__ import annotations

import asyncio
import re
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

LEAVE_S = 1.0  # two Ctrl-C on an empty prompt within this time leave the chat
HINT = "press Ctrl-C again to leave (or /exit, Ctrl-D)"


class MessageInput:
    def __init__(
        self,
        history_file: Path,
        commands: Iterable[str],
        workspace: Callable[[], Path] | None = None,
    ) -> None:
        self.history_file = history_file
        self.commands = sorted(commands)
        self.workspace = workspace  # where Tab completes `@path` (none: no path completion)
        self._session: Any = None
        self._pressed: float | None = None  # when Ctrl-C was pressed on an empty prompt

    def read(
        self, prompt: str = "you> ", drawn: Callable[[], None] | None = None, default: str = ""
    ) -> str:
        """The next message; EOFError on Ctrl-D, KeyboardInterrupt on Ctrl-C. `drawn` is
        called once the prompt is on the screen; `default`: the text the prompt starts with
        (at a terminal)."""
        self._pressed = None
        if not (sys.stdin.isatty() and sys.stdout.isatty()):
            if drawn:
                drawn()
            while True:
                try:
                    return input(prompt)
                except KeyboardInterrupt:
                    if self._leaves():
                        raise
                    print(f"\n{HINT}", flush=True)
        if self._session is None:
            self._session = self._make_session()
        pre_run = None
        if drawn is not None:  # pre_run comes just before the first draw: call soon after it
            pre_run = lambda: asyncio.get_running_loop().call_soon(drawn)  # noqa: E731
        text: str = self._session.prompt(prompt, pre_run=pre_run, default=default)
        return text

    def stop(self, error: BaseException) -> None:
        """From another thread: end a prompt being read by raising `error` from read()."""
        app = self._session.app if self._session is not None else None
        if app is None or not app.is_running or app.loop is None:
            return

        def end() -> None:
            if app.is_running and not app.is_done:
                app.exit(exception=error)

        app.loop.call_soon_threadsafe(end)

    def _leaves(self) -> bool:
        """A Ctrl-C on an empty prompt: whether it is the second within LEAVE_S."""
        now, before = time.monotonic(), self._pressed
        self._pressed = now
        return before is not None and now - before <= LEAVE_S

    def _make_session(self) -> Any:
        from prompt_toolkit import PromptSession
        from prompt_toolkit.application import run_in_terminal
        from prompt_toolkit.completion import WordCompleter
        from prompt_toolkit.history import FileHistory
        from prompt_toolkit.key_binding import KeyBindings

        self.history_file.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        bindings = KeyBindings()

        @bindings.add("escape", "enter")
        def _newline(event: Any) -> None:
            event.current_buffer.insert_text("\n")

        @bindings.add("c-c")
        def _ctrl_c(event: Any) -> None:
            buffer = event.current_buffer
            if buffer.text:  # the draft goes; the chat stays
                buffer.reset()
                self._pressed = None
            elif self._leaves():
                event.app.exit(exception=KeyboardInterrupt, style="class:aborting")
            else:
                run_in_terminal(lambda: print(HINT))

        completer = _completer(WordCompleter(self.commands, sentence=True, pattern=None), self)
        session: Any = PromptSession(
            history=FileHistory(str(self.history_file)),
            completer=completer,
            complete_while_typing=False,
            key_bindings=bindings,
            multiline=False,
            enable_history_search=True,
        )

        def typed(_: Any) -> None:  # typing in between: the next Ctrl-C starts over
            if session.default_buffer.text:
                self._pressed = None

        session.default_buffer.on_text_changed += typed
        return session


_AT_WORD = re.compile(r"(?<!\S)@(\S*)$")  # an `@path` being typed (attachments.MENTION)


def _completer(commands: Any, reading: MessageInput) -> Any:
    """Tab: slash commands at the start of the line; after `@`, workspace paths
    (agentcli/session/attachments.py says which)."""
    from prompt_toolkit.completion import Completer, Completion

    class AtPaths(Completer):  # type: ignore[misc]
        def get_completions(self, document: Any, event: Any) -> Any:
            typed = _AT_WORD.search(document.text_before_cursor)
            if typed is None or reading.workspace is None:
                yield from commands.get_completions(document, event)
                return
            from agentcli.session.attachments import completions

            word = typed.group(1)
            for path in completions(reading.workspace(), word):
                yield Completion(path, start_position=-len(word))

    return AtPaths()


def prefills() -> bool:
    """Whether edit_line can put the text before the person (a terminal), not just read."""
    return sys.stdin.isatty() and sys.stdout.isatty()


def edit_line(prompt: str, default: str) -> str:
    """One line the person edits, starting from `default` (prompt_toolkit at a terminal,
    where the text is prefilled and every key edits it). Without a terminal, a plain line
    is read. EOFError on Ctrl-D, KeyboardInterrupt on Ctrl-C."""
    if not prefills():
        return input(prompt)
    from prompt_toolkit import PromptSession

    text: str = PromptSession().prompt(prompt, default=default)
    return text
