"""Turns session events into terminal output. Answer text goes to `out`; activity to `info`."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.panel import Panel
from rich.syntax import Syntax
from rich.text import Text

from agentcli.events import (
    AssistantMessage,
    Done,
    Event,
    ReviewRequest,
    TextDelta,
    ToolOutput,
    ToolResult,
)
from agentcli.preview import Preview
from agentcli.ui.safe import mark_spans, safe_line
from agentcli.visible import mark, visible

if TYPE_CHECKING:
    from agentcli.ui.live import LiveView

FOLD_LINES = 4


class Renderer:
    """Plain streaming by default; at a colour terminal, Markdown and a status line."""

    def __init__(self, out: Console, info: Console | None = None) -> None:
        self.out = out
        self.info = info or out
        self._mid_line = False
        self.live: LiveView | None = None
        if out.is_terminal and not out.no_color and info is None:
            from agentcli.ui.live import LiveView  # rich.markdown: only for a terminal

            self.live = LiveView(out)

    def begin(self, label: str) -> None:
        """A run starts: show what it waits for, with the time it has taken."""
        if self.live:
            self.live.begin(label)

    def end(self) -> None:
        if self.live:
            self.live.end()
        self.end_line()

    def show(self, event: Event) -> None:
        if isinstance(event, TextDelta):
            if self.live:
                self.live.add_text(event.text)
                return
            shown = visible(event.text)
            self.out.print(shown, end="", markup=False, highlight=False, soft_wrap=True)
            self._mid_line = not event.text.endswith("\n")
        elif isinstance(event, AssistantMessage):
            self.end_line()
            if self.live:
                self.live.finish_text()
            for call in event.tool_calls:
                args = json.dumps(call["args"], ensure_ascii=False)
                arrow = Text("→ ", style="cyan")
                arrow.append_text(safe_line(call["name"], "cyan"))
                arrow.append_text(safe_line(" " + _clip(args, 100), "cyan"))
                self.info.print(arrow)
            if self.live and event.tool_calls:
                names = ", ".join(c["name"] for c in event.tool_calls)
                self.live.begin("running " + names)  # the status line makes it safe
        elif isinstance(event, ToolResult):
            self.end_line()
            self.info.print(fold(event))
            if self.live:
                self.live.begin("thinking")
        elif isinstance(event, ToolOutput):
            if self.live:
                self.live.tool_output(event.text)
        elif isinstance(event, ReviewRequest | Done):
            self.end()

    def end_line(self) -> None:
        if self._mid_line:
            self.out.print()
            self._mid_line = False


def fold(result: ToolResult) -> Text:
    """A tool result folded to a few lines, with its full length."""
    lines = result.content.removesuffix("\n").split("\n")  # not splitlines: \r is shown
    mark, style = ("✗", "red") if result.status == "error" else ("✓", "green")
    text = Text(f"{mark} ", style=style)
    text.append_text(safe_line(result.name, style))
    text.append(f" ({len(lines)} lines, {len(result.content)} chars)\n", style="dim")
    for number, shown in enumerate(lines[:FOLD_LINES]):
        text.append("\n  " if number else "  ", style="dim")
        text.append_text(safe_line(_clip(shown, 160), "dim"))
    if len(lines) > FOLD_LINES:
        text.append(f"\n  … {len(lines) - FOLD_LINES} more lines", style="dim italic")
    return text


def call_panel(name: str, preview: Preview, index: int, total: int, description: str) -> Panel:
    """The call as it will run: every character shown (controls as marks), lines numbered
    so a newline is plain to see, long lines wrapped, never cut."""
    title = safe_line(name, "bold")
    if total > 1:
        title.append(f" ({index}/{total})")
    return Panel(
        Numbered(highlighted(preview.text, preview.kind)),
        title=title,
        subtitle=safe_line(description) if description else None,
        title_align="left",
    )


def highlighted(text: str, kind: str) -> list[Text]:
    """`text` made visible, coloured by its kind, as lines; marks in reverse video."""
    lexer = {"diff": "diff", "shell": "bash", "json": "json"}[kind]
    if kind == "diff":  # each diff line ends in a newline: no empty line after the last
        text = text.removesuffix("\n")
    shown = visible(text, trailing=True).replace("\t", mark("\t"))  # a tab: which bytes?
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
    on its first row when there is more than one: a newline is never mistaken for a wrap."""

    def __init__(self, lines: list[Text]) -> None:
        self.lines = lines or [Text("")]

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        numbered = len(self.lines) > 1
        gutter = len(str(len(self.lines))) + 1 if numbered else 0
        width = max(options.max_width - gutter, 1)
        for number, line in enumerate(self.lines, 1):
            for row, piece in enumerate(_fold(line, width)):
                if numbered:
                    label = f"{number:>{gutter - 1}} " if row == 0 else " " * gutter
                    yield Text(label, style="dim", end="")
                piece.no_wrap, piece.end = True, "\n"
                yield piece


def _fold(line: Text, width: int) -> list[Text]:
    offsets, used = [], 0
    for index, char in enumerate(line.plain):
        size = cell_len(char)
        if used + size > width and used:
            offsets.append(index)
            used = 0
        used += size
    return list(line.divide(offsets)) if offsets else [line]


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
