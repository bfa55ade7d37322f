"""The live part of the chat screen: a status line with elapsed time, and streamed Markdown.

Markdown is re-rendered as it grows; lines that have scrolled above the last few are
printed once and left alone, so the screen does not flicker and long answers scroll.
"""

from __future__ import annotations

import time

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.text import Text

from agentcli.ui.markdown import ShownMarkdown
from agentcli.ui.safe import safe_line
from agentcli.visible import visible

LIVE_LINES = 8  # the tail of the answer that may still change
OUTPUT_LINES = 4  # of a running tool's output
RENDER_EVERY_S = 0.05
FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


class Status:
    """`⠋ thinking 2.3s`: re-rendered by Live, so the clock moves on its own; under it,
    the latest lines a running tool printed."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.started = time.monotonic()
        self.output = ""

    def __rich__(self) -> Text:
        elapsed = time.monotonic() - self.started
        frame = FRAMES[int(elapsed * 10) % len(FRAMES)]
        text = Text(f"{frame} ", style="dim")
        text.append_text(safe_line(self.label, "dim"))
        text.append(f" {elapsed:.1f}s", style="dim")
        lines = self.output.rstrip("\n").split("\n") if self.output else []
        for line in lines[-OUTPUT_LINES:]:  # not splitlines: a \r is shown, not obeyed
            text.append("\n  ", style="dim italic")
            text.append_text(safe_line(line[:200], "dim italic"))
        return text


class LiveView:
    def __init__(self, console: Console) -> None:
        self.console = console
        self.live: Live | None = None
        self.status: Status | None = None
        self.text = ""
        self.printed = 0
        self.rendered_at = 0.0

    def begin(self, label: str) -> None:
        self.status = Status(label)
        if self.live is None:
            self.live = Live(console=self.console, refresh_per_second=10, transient=True)
            self.live.start()
        self._show()

    def add_text(self, delta: str) -> None:
        self.text += delta
        self.status = None
        if time.monotonic() - self.rendered_at >= RENDER_EVERY_S:
            self._show()

    def tool_output(self, text: str) -> None:
        if self.status is not None:
            self.status.output = (self.status.output + text)[-4000:]

    def finish_text(self) -> None:
        """The answer is complete: print what is left of it for good."""
        if self.text:
            for line in self._lines()[self.printed :]:
                self.console.print(line)
        self.text, self.printed = "", 0
        self._show()

    def end(self) -> None:
        self.finish_text()
        if self.live is not None:
            self.live.stop()
            self.live = None
        self.status = None

    def _lines(self) -> list[Text]:
        options = self.console.options.update(width=self.console.width)
        # marks for controls; links as "text (url)", never a hidden OSC 8 target; HTML,
        # comments and entities as the text they are (see agentcli/ui/markdown.py)
        shown = ShownMarkdown(visible(self.text))
        rendered = self.console.render_lines(shown, options, pad=False)
        return [Text.assemble(*((s.text, s.style or "") for s in line)) for line in rendered]

    def _show(self) -> None:
        self.rendered_at = time.monotonic()
        parts: list[RenderableType] = []
        if self.text:
            lines = self._lines()
            settled = max(len(lines) - LIVE_LINES, self.printed)
            for line in lines[self.printed : settled]:
                self.console.print(line)
            self.printed = settled
            parts += lines[settled:]
        if self.status is not None:
            parts.append(self.status)
        if self.live is not None:
            self.live.update(Group(*parts), refresh=True)
