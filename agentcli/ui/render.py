"""Turns session events into terminal output. Answer text goes to `out`; activity to `info`."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from rich.console import Console
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
            self.out.print(event.text, end="", markup=False, highlight=False, soft_wrap=True)
            self._mid_line = not event.text.endswith("\n")
        elif isinstance(event, AssistantMessage):
            self.end_line()
            if self.live:
                self.live.finish_text()
            for call in event.tool_calls:
                args = json.dumps(call["args"], ensure_ascii=False)
                self.info.print(Text(f"→ {call['name']} {_clip(args, 100)}", style="cyan"))
            if self.live and event.tool_calls:
                self.live.begin("running " + ", ".join(c["name"] for c in event.tool_calls))
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
    lines = result.content.splitlines() or [""]
    mark, style = ("✗", "red") if result.status == "error" else ("✓", "green")
    text = Text(f"{mark} {result.name}", style=style)
    text.append(f" ({len(lines)} lines, {len(result.content)} chars)\n", style="dim")
    shown = lines[:FOLD_LINES]
    text.append("\n".join("  " + _clip(line, 160) for line in shown), style="dim")
    if len(lines) > FOLD_LINES:
        text.append(f"\n  … {len(lines) - FOLD_LINES} more lines", style="dim italic")
    return text


def call_panel(name: str, preview: Preview, index: int, total: int, description: str) -> Panel:
    lexer = {"diff": "diff", "shell": "bash", "json": "json"}[preview.kind]
    body = Syntax(preview.text.rstrip("\n"), lexer, theme="ansi_dark", word_wrap=True)
    counter = f" ({index}/{total})" if total > 1 else ""
    return Panel(
        body, title=f"[bold]{name}[/bold]{counter}", subtitle=description, title_align="left"
    )


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
