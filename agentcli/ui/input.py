"""Reading the person's message: line editing, persistent history, multi-line, completion.

At a terminal this is prompt_toolkit: Enter sends, Esc then Enter (or Alt-Enter) starts a
new line, a paste keeps its newlines, Tab completes slash commands, Up recalls history
(kept in the data folder). Without a terminal it reads plain lines.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any


class MessageInput:
    def __init__(self, history_file: Path, commands: Iterable[str]) -> None:
        self.history_file = history_file
        self.commands = sorted(commands)
        self._session: Any = None

    def read(self, prompt: str = "you> ") -> str:
        """The next message; EOFError on Ctrl-D, KeyboardInterrupt on Ctrl-C."""
        if not (sys.stdin.isatty() and sys.stdout.isatty()):
            return input(prompt)
        if self._session is None:
            self._session = self._make_session()
        text: str = self._session.prompt(prompt)
        return text

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
