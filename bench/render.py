"""Streamed Markdown on the chat screen: the old re-render of the whole answer at every
chunk beside the block-by-block renderer (issue 14, item 2).

Each case feeds an answer to the chat's live view (agentcli/ui/live_answer.py) in pieces of
--piece characters on a 120-column colour console that writes to memory. The view's clock
moves 1/--rate seconds per piece, as if a model sent them at that rate, but the bench does
not wait: the time measured is the screen's alone (no model, no network). "s" is all of
it; "end s" the part after the last piece, the wait before the answer is all on screen.
Cases:

- fence: a ```python block of 1,000 lines;
- lines: 5,400 short lines, one paragraph per line;
- list: 5,400 short list items (one open block: the live part shows its last lines).

`old` is the live view before this change (every render parses and renders the whole
answer, at most every 50 ms); `new` is agentcli/ui/live_answer.py with
agentcli/ui/markdown_stream.py.
A case longer than --timeout seconds is stopped and shown as "> T". Medians of --rounds
rounds, the two interleaved.

    .venv/bin/python bench/render.py                   # 3 rounds
    .venv/bin/python bench/render.py --quick           # a tenth of the sizes, one round

Each case's row goes to stderr as it is done; the table of them all to stdout at the end.
"""

from __future__ import annotations

import argparse
import io
import sys
import time
from collections.abc import Callable

from _common import machine, median, table
from rich.console import Console, Group
from rich.live import Live
from rich.text import Text

from agentcli.terminal_text import visible
from agentcli.ui import live_answer as live
from agentcli.ui.live_answer import LIVE_LINES, RENDER_EVERY_S, LiveView
from agentcli.ui.markdown import ShownMarkdown


def fence(n: int) -> str:
    body = "".join(f"    total += values[{i}] * {i}  # line {i} of the loop\n" for i in range(n))
    return "Here is the code:\n\n```python\ndef f(values):\n" + body + "```\n\nDone.\n"


def lines(n: int) -> str:
    return "".join(f"line {i}: ok\n\n" for i in range(n))


def items(n: int) -> str:
    return "".join(f"- item {i}: ok\n" for i in range(n))


CASES: dict[str, tuple[Callable[[int], str], int]] = {
    "fence 1,000 lines": (fence, 1000),
    "lines 5,400": (lines, 5400),
    "list 5,400 items": (items, 5400),
}


class OldLiveView(LiveView):
    """The live view as it was: the whole answer parsed and rendered at every render."""

    def __init__(self, console: Console) -> None:
        super().__init__(console)
        self.whole = ""

    def add_text(self, delta: str) -> None:
        self.whole += delta
        self.status = None
        if live.time.monotonic() - self.rendered_at >= RENDER_EVERY_S:
            self._show()

    def finish_text(self) -> None:
        if self.whole:
            for line in self._old_lines()[self.printed :]:
                self.console.print(line)
        self.whole, self.printed = "", 0

    def _old_lines(self) -> list[Text]:
        options = self.console.options.update(width=self.console.width)
        rendered = self.console.render_lines(ShownMarkdown(visible(self.whole)), options, pad=False)
        return [Text.assemble(*((s.text, s.style or "") for s in line)) for line in rendered]

    def _show(self) -> None:
        self.rendered_at = live.time.monotonic()
        parts: list[Text] = []
        if self.whole:
            rendered = self._old_lines()
            settled = max(len(rendered) - LIVE_LINES, self.printed)
            for line in rendered[self.printed : settled]:
                self.console.print(line)
            self.printed = settled
            parts += rendered[settled:]
        if self.live is not None:
            self.live.update(Group(*parts), refresh=True)


class Clock:
    """live_answer.py's clock: real time, plus `interval` seconds per chunk fed (the time a
    model takes to send them), so renders are spaced as in a real stream without the
    bench waiting for it."""

    def __init__(self) -> None:
        self.ahead = 0.0

    def monotonic(self) -> float:
        return time.monotonic() + self.ahead


def feed(
    view_type: type[LiveView], answer: str, piece: int, interval: float, timeout: float
) -> tuple[float, float] | None:
    """Seconds the screen took for `answer` fed in pieces, `interval` apart, and of them
    the seconds after the last piece; None when it took over `timeout`."""
    out = io.StringIO()
    console = Console(file=out, width=120, height=40, force_terminal=True, color_system="256")
    view = view_type(console)
    clock, real = Clock(), live.time
    live.time = clock  # type: ignore[assignment]
    try:
        start = time.perf_counter()
        view.live = Live(console=console, auto_refresh=False, transient=True)
        view.live.start()
        for at in range(0, len(answer), piece):
            clock.ahead += interval
            view.add_text(answer[at : at + piece])
            if time.perf_counter() - start > timeout:
                view.live.stop()
                return None
        last = time.perf_counter()
        view.end()
        done = time.perf_counter()
    finally:
        live.time = real
    assert answer.split()[-1] in out.getvalue()
    return done - start, done - last


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--piece", type=int, default=16, help="characters per chunk")
    parser.add_argument("--rate", type=float, default=200.0, help="chunks a second the model sends")
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    rounds = 1 if args.quick else args.rounds
    rows = []
    header = ["case", "chars", "chunks", "old s", "new s", "old end s", "new end s"]
    for name, (make, size) in CASES.items():
        answer = make(size // 10 if args.quick else size)
        times: dict[str, list[tuple[float, float] | None]] = {"old": [], "new": []}
        for _ in range(rounds):
            for label, view in (("old", OldLiveView), ("new", LiveView)):
                if times[label] and times[label][-1] is None:
                    continue  # ran out of time once: it will again
                result = feed(view, answer, args.piece, 1 / args.rate, args.timeout)
                times[label].append(result)
        total, end = {}, {}
        for label, values in times.items():
            done = [v for v in values if v is not None]
            complete = len(done) == len(values)
            total[label] = (
                f"{median([v[0] for v in done]):.2f}" if complete else (f"> {args.timeout:.0f}")
            )
            end[label] = f"{median([v[1] for v in done]):.2f}" if complete else ""
        chunks = -(-len(answer) // args.piece)
        row = [name, len(answer), chunks, total["old"], total["new"], end["old"], end["new"]]
        rows.append(row)
        print(table(header, [row]), file=sys.stderr, flush=True)  # progress; the table: stdout
    print()
    print(
        f"{machine()}; pieces of {args.piece} characters, {args.rate:.0f} a second"
        f" (the stream lasts chunks / {args.rate:.0f} s); medians of {rounds} rounds"
    )
    print(table(header, rows))


if __name__ == "__main__":
    main()
