"""Calling the person back to a review that waits in chat: once it has waited `[notify]
after` seconds, the terminal bell (BEL) and a desktop notification escape, OSC 9 (iTerm2,
Windows Terminal, ConEmu) and OSC 777 (rxvt, foot, kitty...), once per review; and the
caller's own `also` (the notify command), in the timer's thread.

The notification's text names the tool and its main argument, which the model chose: it is
cut down to printable characters (no ESC, BEL, C0/C1 controls, format characters, nor the
`;` that separates an OSC's fields), one line of at most MAX_CHARS. The escapes draw nothing
and move no cursor, so they are written as they are while the prompt waits.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from types import TracebackType
from typing import IO, Any

from agentcli.terminal_text import unsafe

MAX_CHARS = 100
TITLE = "agentcli"
MAIN_ARGUMENTS = ("command", "path", "url", "query", "pattern")
_BLANKS = re.compile(r"\s+")


def notification_text(text: object, limit: int = MAX_CHARS) -> str:
    """`text` made safe inside an OSC: every character a terminal could act on, or that
    would not show, and `;`, become a space; blanks are squeezed; at most `limit` chars."""
    text = text if isinstance(text, str) else str(text)
    kept = "".join(" " if char == ";" or unsafe(char, multiline=False) else char for char in text)
    kept = _BLANKS.sub(" ", kept).strip()
    return kept if len(kept) <= limit else kept[: limit - 1].rstrip() + "…"


def call_summary(name: str, args: Any) -> str:
    """The tool and its main argument, as one line (not yet made safe)."""
    if isinstance(args, dict):
        for key in MAIN_ARGUMENTS:
            if isinstance(args.get(key), str):
                return f"{name} {args[key]}"
        for value in args.values():
            if isinstance(value, str):
                return f"{name} {value}"
    return f"{name} {json.dumps(args, ensure_ascii=False, default=str)}"


def review_text(pending: list[dict[str, Any]]) -> str:
    """What the notification says about a review: its first call, and how many more."""
    if not pending:
        return "approval needed"
    more = f" (+{len(pending) - 1} more)" if len(pending) > 1 else ""
    return f"approval needed: {call_summary(str(pending[0]['name']), pending[0]['args'])}{more}"


def escapes(body: str, title: str = TITLE) -> str:
    """BEL, then the OSC 9 and OSC 777 notifications; `body` and `title` are made safe."""
    body, title = notification_text(body), notification_text(title)
    return f"\a\x1b]9;{body}\a\x1b]777;notify;{title};{body}\a"


class Alarm:
    """A context manager around a review prompt: after `after` seconds, once, the escapes
    on `terminal` (if it is one) and `also()`; nothing if the review ends first."""

    def __init__(
        self,
        after: float,
        body: str,
        terminal: IO[str] | None,
        also: Callable[[], None] | None = None,
    ) -> None:
        self.body = body
        self.terminal = terminal if terminal is not None and _is_tty(terminal) else None
        self.also = also
        self.rang = False
        self._ended = False
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        if self.terminal is not None or also is not None:
            self._timer = threading.Timer(max(after, 0.0), self._ring)
            self._timer.daemon = True  # never keeps agentcli from leaving

    def __enter__(self) -> Alarm:
        if self._timer is not None:
            self._timer.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        with self._lock:
            self._ended = True
        if self._timer is not None:
            self._timer.cancel()

    def _ring(self) -> None:
        with self._lock:
            if self._ended or self.rang:
                return
            self.rang = True
            if self.terminal is not None:
                try:
                    self.terminal.write(escapes(self.body))
                    self.terminal.flush()
                except (OSError, ValueError):  # the terminal went away
                    pass
        if self.also is not None:
            self.also()


def _is_tty(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (OSError, ValueError):
        return False
