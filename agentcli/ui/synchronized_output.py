"""Synchronized output (DEC private mode 2026): each redraw reaches the screen whole.

A redraw of the live part moves the cursor up, erases the rows and draws them again. A
terminal that paints while those bytes arrive shows the half-erased screen: a flicker, worse
on a slow terminal or link. Between ESC[?2026h and ESC[?2026l a terminal that knows the
mode (kitty, WezTerm, iTerm2, foot, Windows Terminal, Alacritty, tmux 3.4, VTE 0.78...)
paints nothing until the end; one that does not ignores both, as it does any private mode
it does not know.

`Synchronized` is a Rich render hook: pushed after a Live has pushed its own, it sees what
the Live made of a print (cursor moves, the printed lines, the live part) and brackets it,
so each print and each refresh is one synchronized update. A Live's last move, the erasing
of its part when it stops, is written by `Console.control` (no hook): the view brackets
it with `code(BEGIN)` and `code(END)` itself.
"""

from __future__ import annotations

from rich.console import ConsoleRenderable, RenderHook
from rich.control import Control, ControlType
from rich.segment import Segment

BEGIN = "\x1b[?2026h"
END = "\x1b[?2026l"


def code(sequence: str) -> Control:
    """An escape sequence written as it is, as a control segment (no width, never cut by
    cropping); the code in its list moves nothing and only marks it as a control."""
    control = Control()
    control.segment = Segment(sequence, None, [(ControlType.CURSOR_FORWARD, 0)])
    return control


class Synchronized(RenderHook):
    def process_renderables(self, renderables: list[ConsoleRenderable]) -> list[ConsoleRenderable]:
        return [code(BEGIN), *renderables, code(END)]
