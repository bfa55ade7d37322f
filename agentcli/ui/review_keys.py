"""Reading a review's choice: one key press at a terminal, a line otherwise.

At a terminal (stdin and stdout both), the choice is one key, read with the terminal in
cbreak mode (no echo, no line editing, Ctrl-C and Ctrl-D arrive as keys): no Enter is
needed. What was typed before the choice was asked is never a decision:

- input waiting when the prompt is drawn (typed while the model answered or the panel was
  drawn) is discarded first (tcflush);
- a read that brings more than one key at once is not a key press but a paste, a burst of
  typed-ahead keys or an escape sequence (an arrow, Alt-x): it is dropped, and so is what
  follows it until the input has been quiet for QUIET_S (the rest of a paste that began
  before the prompt and was cut by the flush);
- bracketed paste (ESC [?2004h) is on while the key is read, so a paste the terminal marks
  arrives whole with its markers and is dropped with them.

One key followed by Enter in the same read counts as that key: what a person used to the
line prompt types, or a driver that writes a line at a time. Esc and Ctrl-C are `q`;
Ctrl-D raises EOFError (the caller leaves); Ctrl-L is REDRAW.

Without a terminal (a pipe, a script) the choice is a line, as before: its text, stripped;
`q` on Ctrl-C (SIGINT), EOFError at the end of the input.
"""

from __future__ import annotations

import os
import select
import sys
import termios
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager

from rich.console import Console
from rich.text import Text

QUIT = "q"
WITHDRAWN = ""  # what read_choice returns when its question no longer waits (`gone`)
GONE_POLL_S = 0.1
REDRAW = "\x0c"  # Ctrl-L: draw the review again
ESC, CTRL_C, CTRL_D = "\x1b", "\x03", "\x04"
ENTER = ("\r", "\n")
ESC_WAIT_S = 0.05  # an Esc followed this soon by more bytes is an escape sequence
QUIET_S = 0.25  # after a paste or a burst, keys count again once the input is this quiet
PASTE_ON, PASTE_OFF = "\x1b[?2004h", "\x1b[?2004l"
DROPPED = "(not a key press: pasted or typed-ahead text is ignored; press one key)"
NAMES = {ESC: "Esc", CTRL_C: "Ctrl-C", REDRAW: "Ctrl-L"}


def at_terminal() -> bool:
    """Whether choices are single keys (stdin and stdout are a terminal)."""
    return sys.stdin.isatty() and sys.stdout.isatty()


def read_choice(console: Console, prompt: str, gone: Callable[[], bool] | None = None) -> str:
    """The choice: one key at a terminal (QUIT for q, Esc, Ctrl-C; REDRAW for Ctrl-L), else
    a stripped line (QUIT for Ctrl-C). EOFError on Ctrl-D or the end of the input. At a
    terminal, WITHDRAWN once ``gone()`` is true before a key comes."""
    if not at_terminal():
        try:
            return console.input(Text(prompt, style="bold")).strip()
        except KeyboardInterrupt:  # Ctrl-C at a review is q
            console.print()  # the prompt's line ends: nothing is printed after it
            return QUIT
    key = _read_key(console, prompt, gone)
    if key == WITHDRAWN:
        console.print()
        return key
    return _said(console, key)


def _said(console: Console, key: str) -> str:
    """Echo the key read; the choice it means (EOFError for Ctrl-D)."""
    console.print("" if key == CTRL_D else NAMES.get(key, key if key.isprintable() else repr(key)))
    if key == CTRL_D:
        raise EOFError
    return QUIT if key in (ESC, CTRL_C) else key


def _read_key(console: Console, prompt: str, gone: Callable[[], bool] | None = None) -> str:
    fd = sys.stdin.fileno()
    with _cbreak(fd, console):
        termios.tcflush(fd, termios.TCIFLUSH)  # typed ahead: never a decision
        console.print(Text(prompt, style="bold"), end="")  # keys from now on are read
        return _next_key(fd, console, prompt, gone)


def _next_key(fd: int, console: Console, prompt: str, gone: Callable[[], bool] | None) -> str:
    """The next key pressed since the prompt was drawn (the terminal in cbreak mode)."""
    noisy_until = 0.0  # after a paste or burst: its tail is dropped too
    while True:
        while gone is not None and not _more_within(fd, GONE_POLL_S):
            if gone():
                return WITHDRAWN
        chunk = os.read(fd, 4096).decode("utf-8", "replace")
        if not chunk:
            return CTRL_D
        if chunk == ESC and _more_within(fd, ESC_WAIT_S):  # the start of a sequence
            chunk += os.read(fd, 4096).decode("utf-8", "replace")
        key = chunk[:-1] if len(chunk) == 2 and chunk[-1] in ENTER else chunk
        quiet = time.monotonic() >= noisy_until
        if len(key) == 1 and quiet:
            if key not in ENTER:  # Enter alone decides nothing
                return key
            continue
        if quiet:  # said once for each burst
            console.print()
            console.print(Text(DROPPED, style="yellow"))
            console.print(Text(prompt, style="bold"), end="")
        noisy_until = time.monotonic() + QUIET_S


class HeldChoice:
    """A choice drawn before it can be answered (resume draws a parked review from the
    thread index while the session is made: cli/early_review.py). From the moment it is
    drawn the terminal is in cbreak mode and what was typed before is discarded, as for any
    choice; a key pressed while the session is made waits, unechoed, for `take` (the
    preview held) or is discarded by `drop` (it did not hold: never carried over to
    another panel). Either gives the terminal back as it was."""

    def __init__(self, console: Console, prompt: str) -> None:
        self.console, self.prompt = console, prompt
        self._terminal = ExitStack()
        self.fd = sys.stdin.fileno()
        self._terminal.enter_context(_cbreak(self.fd, console))
        termios.tcflush(self.fd, termios.TCIFLUSH)  # typed ahead: never a decision
        console.print(Text(prompt, style="bold"), end="")
        self.interrupted = False  # something was printed after the prompt
        self.done = False  # taken or dropped: the terminal is as it was

    def interrupt(self) -> None:
        """End the prompt's line before something else is printed (`take` draws it again)."""
        if not self.interrupted:
            self.console.print()
            self.interrupted = True

    def take(self) -> str:
        """The choice, as read_choice returns it: the key pressed since the prompt was drawn
        (or the next one)."""
        try:
            if self.interrupted:
                self.console.print(Text(self.prompt, style="bold"), end="")
            key = _next_key(self.fd, self.console, self.prompt, None)
        finally:
            self.done = True
            self._terminal.close()
        return _said(self.console, key)

    def drop(self) -> None:
        """Discard what was typed at it; the terminal as it was (nothing, once taken)."""
        if self.done:
            return
        self.done = True
        termios.tcflush(self.fd, termios.TCIFLUSH)
        self.interrupt()
        self._terminal.close()


def _more_within(fd: int, seconds: float) -> bool:
    readable, _, _ = select.select([fd], [], [], seconds)
    return bool(readable)


@contextmanager
def _cbreak(fd: int, console: Console) -> Iterator[None]:
    """Keys one at a time, unechoed, Ctrl-C/Ctrl-D/Ctrl-Z as bytes; bracketed paste on;
    the terminal as it was afterwards."""
    before = termios.tcgetattr(fd)
    mode = termios.tcgetattr(fd)
    mode[3] &= ~(termios.ICANON | termios.ECHO | termios.ISIG | termios.IEXTEN)
    mode[6][termios.VMIN], mode[6][termios.VTIME] = 1, 0
    termios.tcsetattr(fd, termios.TCSANOW, mode)
    console.file.write(PASTE_ON)
    console.file.flush()
    try:
        yield
    finally:
        console.file.write(PASTE_OFF)
        console.file.flush()
        termios.tcsetattr(fd, termios.TCSANOW, before)
