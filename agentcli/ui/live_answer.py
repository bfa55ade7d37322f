"""The live part of the chat screen: a status line with elapsed time, and streamed Markdown.

Finished Markdown blocks are printed once, above the live part (agentcli/ui/markdown_stream.py);
only the open block is re-rendered as it grows. Of an open block taller than a few lines,
the lines that have scrolled above the last few are printed once and left alone, so the
screen does not flicker and long answers scroll. Renders are spaced so that they take a
small part of the time: a long open block cannot make the stream wait on the screen.

Each render is one redraw: the lines settled since the last one are printed with the live
part drawn under them in the same print, and each redraw is one synchronized update
(synchronized_output.py). A clock redraws the live part while the status line shows (its
spinner and seconds move), and renders text that came since the last render when the
stream stops for a while, so the screen never lags a stalled stream; otherwise text is
rendered as it comes. Lines
printed for good are written whole (a code line longer than the screen is wrapped by the
terminal, so a copy of it is the line); lines of the live part are cut to the width, as it
must know how many rows it takes. While part of an open block is on the screen for good,
the block keeps the width it was printed at: after a resize, its rest is not drawn again.
"""

from __future__ import annotations

import threading
import time

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.live import Live
from rich.text import Text

from agentcli.ui.markdown_stream import Line, MarkdownStream
from agentcli.ui.safe_text import safe_line
from agentcli.ui.synchronized_output import BEGIN, END, Synchronized, code

LIVE_LINES = 8  # the tail of the answer that may still change
OUTPUT_LINES = 4  # of a running tool's output
RENDER_EVERY_S = 0.1
TICK_S = 0.1  # the status line's clock
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
        text.append_text(self.output_lines())
        return text

    def output_lines(self) -> Text:
        """The latest lines the running tool printed, each on a line of its own."""
        text = Text()
        lines = self.output.rstrip("\n").split("\n") if self.output else []
        for line in lines[-OUTPUT_LINES:]:  # not splitlines: a \r is shown, not obeyed
            text.append("\n  ", style="dim italic")
            text.append_text(safe_line(line[:200], "dim italic", tabs=True))  # output: layout
        return text


class _Part:
    """What the live part shows now: Live keeps this one object, whose rows change, so a
    print above it draws the rows as they are now (Live reads its renderable at refresh)."""

    def __init__(self) -> None:
        self.parts: list[RenderableType] = []

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield Group(*self.parts)


class LiveView:
    def __init__(self, console: Console, tick: bool = True) -> None:
        self.console = console
        self.tick = tick  # run the clock (bench/render.py times the renders alone)
        self.live: Live | None = None
        self.part = _Part()
        self.ticking: threading.Event | None = None
        self.status: Status | None = None
        self.stream = MarkdownStream(console)
        self.text = False  # some of the answer has come
        self.printed = 0  # lines of the open block printed for good
        self.rendered_at = 0.0
        self.render_s = 0.0  # what the last render took
        self.call = -1  # the streaming call the status line shows
        self.behind = False  # text came that is not rendered yet
        self.lock = threading.RLock()  # the clock's thread renders too

    def begin(self, label: str) -> None:
        with self.lock:
            self._begin(label)

    def _begin(self, label: str) -> None:
        self.status, self.call = Status(label), -1
        if self.live is None:
            self.live = Live(self.part, console=self.console, auto_refresh=False, transient=True)
            self.live.start()
            self.console.push_render_hook(Synchronized())  # after the Live's own: see there
            self.ticking = threading.Event()
            if self.tick:
                clock = threading.Thread(target=self._tick, args=(self.live, self.ticking))
                clock.daemon = True
                clock.start()
        self._show()

    def _tick(self, live: Live, stop: threading.Event) -> None:
        """Redraw while the status line shows (its clock moves on its own); render the text
        that came since the last render once it is due."""
        while not stop.wait(TICK_S):
            with self.lock:
                if stop.is_set():
                    return
                if self.behind and self._due():
                    self._show()
                elif self.status is not None:
                    live.refresh()

    def _due(self) -> bool:
        wait = max(RENDER_EVERY_S, self.render_s / RENDER_SHARE)
        return time.monotonic() - self.rendered_at >= wait

    def progress(self, index: int, label: str) -> None:
        """A tool call is streaming: the status line says which and how far (its clock
        counts from the call's start)."""
        with self.lock:
            if self.status is None or self.call != index:
                self.status, self.call = Status(label), index
                self._show()
            self.status.label = label

    def add_text(self, delta: str) -> None:
        with self.lock:
            self.stream.add(delta)
            self.text = self.text or bool(delta)
            self.status = None
            self.behind = True
            if self._due():
                self._show()

    def tool_output(self, text: str) -> None:
        with self.lock:
            if self.status is not None:
                self.status.output = (self.status.output + text)[-4000:]

    def finish_text(self) -> None:
        """The answer is complete: print what is left of it for good."""
        with self.lock:
            self._finish_text()

    def _finish_text(self) -> None:
        if self.text:
            self._print(self.stream.settle())
            self._print(self.stream.close())
        self.text = False
        self._show()

    def end(self) -> None:
        with self.lock:
            self._end()

    def _end(self) -> None:
        self._finish_text()
        status, self.status = self.status, None
        if self.live is not None:
            if self.ticking is not None:
                self.ticking.set()
            with self.console:  # one write: the live part erased, in one synchronized update
                self.console.control(code(BEGIN))
                self.console.pop_render_hook()  # Synchronized: the Live pops its own
                self.live.stop()
                self.console.control(code(END))
            self.live = None
        if status is not None and status.output:  # a tool stopped before its result came:
            kept = safe_line(f"{status.label}: stopped; what it printed last:", "dim")
            kept.append_text(status.output_lines())
            self.console.print(kept)  # what was on the screen stays there

    def _print(self, lines: list[Line]) -> None:
        """Lines for good: the first ones may be out already (see _show)."""
        self._out(lines[self.printed :])
        self.printed = 0 if lines else self.printed

    def _out(self, lines: list[Line]) -> None:
        """In one print, which redraws the live part under them; written whole (not cropped:
        the terminal wraps a long line, see the module's docstring)."""
        if lines:
            self.console.print(Group(*lines), crop=False)
        elif self.live is not None:
            self.live.refresh()

    def _show(self) -> None:
        started = self.rendered_at = time.monotonic()
        self.behind = False
        parts: list[RenderableType] = []
        out: list[Line] = []
        if self.text:
            settled_now = self.stream.settle()
            out += settled_now[self.printed :]
            if settled_now:  # the open block settled: none of the next one is out yet
                self.printed = 0
            if self.printed == 0:
                self.stream.width = self.console.width
            lines = self.stream.live()
            settled = max(len(lines) - LIVE_LINES, self.printed)
            out += lines[self.printed : settled]
            self.printed = settled
            parts += [row for line in lines[settled:] for row in line.fitted(self.console.width)]
        if self.status is not None:
            parts.append(self.status)
        self.part.parts = parts
        self._out(out)
        self.render_s = time.monotonic() - started
