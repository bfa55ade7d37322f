"""Reading the person's message: line editing, persistent history, multi-line, completion.

At a terminal this is prompt_toolkit: Enter sends, Esc then Enter (or Alt-Enter) starts a
new line, a paste keeps its newlines, Tab completes slash commands, Up recalls history
(kept in the data folder). Without a terminal it reads plain lines.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any


class MessageInput:
    def __init__(self, history_file: Path, commands: Iterable[str]) -> None:
        self.history_file = history_file
        self.commands = sorted(commands)
        self._session: Any = None

    def read(self, prompt: str = "you> ", drawn: Callable[[], None] | None = None) -> str:
        """The next message; EOFError on Ctrl-D, KeyboardInterrupt on Ctrl-C. `drawn` is
        called once the prompt is on the screen."""
        if not (sys.stdin.isatty() and sys.stdout.isatty()):
            if drawn:
                drawn()
            return input(prompt)
        if self._session is None:
            self._session = self._make_session()
        pre_run = None
        if drawn is not None:  # pre_run comes just before the first draw: call soon after it
            pre_run = lambda: asyncio.get_running_loop().call_soon(drawn)  # noqa: E731
        text: str = self._session.prompt(prompt, pre_run=pre_run)
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

    def _make_session(self) -> Any:
        from prompt_toolkit import PromptSession
        from prompt_toolkit.completion import WordCompleter
        from prompt_toolkit.history import FileHistory
        from prompt_toolkit.key_binding import KeyBindings

        self.history_file.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        bindings = KeyBindings()

        @bindings.add("escape", "enter")
        def _newline(event: Any) -> None:
            event.current_buffer.insert_text("\n")

        completer = WordCompleter(self.commands, sentence=True, pattern=None)
        return PromptSession(
            history=FileHistory(str(self.history_file)),
            completer=completer,
            complete_while_typing=False,
            key_bindings=bindings,
            multiline=False,
            enable_history_search=True,
        )
