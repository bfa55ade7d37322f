"""The live part of the chat screen: a status line with elapsed time, and streamed Markdown.

Finished Markdown blocks are printed once, above the live part (agentcli/ui/markdown_stream.py);
only the open block is re-rendered as it grows. Of an open block taller than a few lines,
the lines that have scrolled above the last few are printed once and left alone, so the
screen does not flicker and long answers scroll. Renders are spaced so that they take a
small part of the time: a long open block cannot make the stream wait on the screen.
"""

from __future__ import annotations

import time

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.text import Text

from agentcli.ui.markdown_stream import Line, MarkdownStream
from agentcli.ui.safe_text import safe_line

LIVE_LINES = 8  # the tail of the answer that may still change
OUTPUT_LINES = 4  # of a running tool's output
RENDER_EVERY_S = 0.05
RENDER_SHARE = 0.25  # at most this part of the time goes to re-rendering the open block
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
            text.append_text(safe_line(line[:200], "dim italic", tabs=True))  # output: layout
        return text


class LiveView:
    def __init__(self, console: Console) -> None:
        self.console = console
        self.live: Live | None = None
        self.status: Status | None = None
        self.stream = MarkdownStream(console)
        self.text = False  # some of the answer has come
        self.printed = 0  # lines of the open block printed for good
        self.rendered_at = 0.0
        self.render_s = 0.0  # what the last render took
        self.call = -1  # the streaming call the status line shows

    def begin(self, label: str) -> None:
        self.status, self.call = Status(label), -1
        if self.live is None:
            self.live = Live(console=self.console, refresh_per_second=10, transient=True)
            self.live.start()
        self._show()

    def progress(self, index: int, label: str) -> None:
        """A tool call is streaming: the status line says which and how far (its clock
        counts from the call's start)."""
        if self.status is None or self.call != index:
            self.status, self.call = Status(label), index
            self._show()
        self.status.label = label

    def add_text(self, delta: str) -> None:
        self.stream.add(delta)
        self.text = self.text or bool(delta)
        self.status = None
        wait = max(RENDER_EVERY_S, self.render_s / RENDER_SHARE)
        if time.monotonic() - self.rendered_at >= wait:
            self._show()

    def tool_output(self, text: str) -> None:
        if self.status is not None:
            self.status.output = (self.status.output + text)[-4000:]

    def finish_text(self) -> None:
        """The answer is complete: print what is left of it for good."""
        if self.text:
            self._print(self.stream.settle())
            self._print(self.stream.close())
        self.text = False
        self._show()

    def end(self) -> None:
        self.finish_text()
        if self.live is not None:
            self.live.stop()
            self.live = None
        self.status = None

    def _print(self, lines: list[Line]) -> None:
        """Lines for good: the first ones may be out already (see _show)."""
        self._out(lines[self.printed :])
        self.printed = 0 if lines else self.printed

    def _out(self, lines: list[Line]) -> None:
        """In one print: each print while Live runs redraws the live part too."""
        if lines:
            self.console.print(Group(*lines))

    def _show(self) -> None:
        started = self.rendered_at = time.monotonic()
        parts: list[RenderableType] = []
        if self.text:
            self._print(self.stream.settle())
            lines = self.stream.live()
            settled = max(len(lines) - LIVE_LINES, self.printed)
            self._out(lines[self.printed : settled])
            self.printed = settled
            parts += lines[settled:]
        if self.status is not None:
            parts.append(self.status)
        if self.live is not None:
            self.live.update(Group(*parts), refresh=True)
        self.render_s = time.monotonic() - started
