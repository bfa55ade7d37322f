"""The panel a call is reviewed in: its text as it will run, every character shown
(controls as marks), coloured by its kind (a command, JSON, a diff), lines numbered and
wrapped at the panel's width, never cut."""

from __future__ import annotations

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.panel import Panel
from rich.syntax import Syntax
from rich.text import Text

from agentcli.terminal_text import mark, visible
from agentcli.ui.call_preview import Preview
from agentcli.ui.diff_text import diff_shown
from agentcli.ui.safe_text import mark_spans, safe_line


def call_panel(
    name: str, preview: Preview, index: int, total: int, description: str, note: str = ""
) -> Panel:
    """The call as it will run: every character shown (controls as marks), lines numbered
    so a newline is plain to see, long lines wrapped, never cut. `note`: agentcli's own
    word after the name (" (edited)"), styled apart from it."""
    title = safe_line(name, "bold")
    if total > 1:
        title.append(f" ({index}/{total})")
    if note:
        title.append(note, style="bold yellow")
    return Panel(
        Numbered(highlighted(preview.text, preview.kind), diff=preview.kind == "diff"),
        title=title,
        subtitle=safe_line(description) if description else None,
        title_align="left",
    )


def highlighted(text: str, kind: str) -> list[Text]:
    """`text` made visible, coloured by its kind, as lines; marks in reverse video."""
    lexer = {"diff": "diff", "shell": "bash", "json": "json"}[kind]
    if kind == "diff":  # each diff line ends in a newline: no empty line after the last
        shown = diff_shown(text.removesuffix("\n"))
    else:  # a command runs as it is: `a<TAB>b` and `a b` differ to bash (in quotes, `<<-`),
        # and so do the blanks that end a line: each is shown as a mark
        shown = visible(text, trailing=True).replace("\t", mark("\t"))
    colour = Syntax(shown, lexer, theme="ansi_dark").highlight(shown)
    extra = len(colour.plain) - len(shown)
    if colour.plain.startswith(shown):  # the highlighter may add a newline at the end
        if extra:  # (right_crop(0) would crop it all)
            colour.right_crop(extra)
    else:  # it changed the text: show the text itself, uncoloured
        colour = Text(shown)
    mark_spans(colour, shown)
    return list(colour.split("\n", allow_blank=True))


class Numbered:
    """Lines cut at the panel's width character by character (as a terminal would wrap
    them, so runs of spaces keep their length and nothing is cut off), each line numbered
    on its first row when there is more than one: a newline is never mistaken for a wrap.
    In a diff, every row a `+` or `-` line wraps onto starts with that mark again, so no
    part of an added or removed line reads as context."""

    def __init__(self, lines: list[Text], diff: bool = False) -> None:
        self.lines = lines or [Text("")]
        self.diff = diff

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        numbered = len(self.lines) > 1
        gutter = len(str(len(self.lines))) + 1 if numbered else 0
        width = max(options.max_width - gutter, 1)
        for number, line in enumerate(self.lines, 1):
            sign = line.plain[:1] if self.diff and line.plain[:1] in ("+", "-") else ""
            # the mark takes a column of each continuation row (none left in a 1-wide panel)
            carry = sign if width > 1 else ""
            for row, piece in enumerate(_fold(line, width, width - len(carry))):
                if numbered:
                    label = f"{number:>{gutter - 1}} " if row == 0 else " " * gutter
                    yield Text(label, style="dim", end="")
                if row and carry:
                    yield Text(carry, style=DIFF_SIGNS[carry], end="")
                piece.no_wrap, piece.end = True, "\n"
                yield piece


DIFF_SIGNS = {"+": "green", "-": "red"}


def _fold(line: Text, width: int, rest: int | None = None) -> list[Text]:
    """`line` cut into rows: the first `width` cells wide, the others `rest` (default the same)."""
    offsets, used, room = [], 0, width
    for index, char in enumerate(line.plain):
        size = cell_len(char)
        if used + size > room and used:
            offsets.append(index)
            used, room = 0, width if rest is None else rest
        used += size
    return list(line.divide(offsets)) if offsets else [line]
