"""Streamed Markdown on the chat screen: the time the chat's live view takes, and how it
grows with the answer (issue 14, item 2; issue 27, bug 8).

Each case feeds an answer to the chat's live view (agentcli/ui/live_answer.py) in pieces of
--piece characters on a 120-column colour console that writes to memory. The view's clock
moves 1/--rate seconds per piece, as if a model sent them at that rate, but the bench does
not wait: the time measured is the screen's alone (no model, no network). "s" is all of
it; "end s" the part after the last piece, the wait before the answer is all on screen;
"x prev" the ratio of "s" to the case half its size (2.0: linear). Cases:

- fence: a ```python block of 250, 500, 1,000 and 2,000 lines;
- lines: 5,400 short lines, one paragraph per line;
- list: 5,400 short list items (one open block: the live part shows its last lines).

Medians of --rounds rounds. The live view measured is this checkout's, or with --tree DIR
that of the checkout in DIR (its agentcli/ package, with this interpreter's libraries): the
same script measures both sides of a change (bench/README.md has the figures before and
after).

    .venv/bin/python bench/render.py                   # 3 rounds
    .venv/bin/python bench/render.py --tree ../before  # another checkout's live view
    .venv/bin/python bench/render.py --quick           # a tenth of the sizes, one round

Each case's row goes to stderr as it is done; the table of them all to stdout at the end.
"""

from __future__ import annotations

import argparse
import io
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from _common import machine, median, table, verdict
from rich.console import Console
from rich.live import Live


def fence(n: int) -> str:
    body = "".join(f"    total += values[{i}] * {i}  # line {i} of the loop\n" for i in range(n))
    return "Here is the code:\n\n```python\ndef f(values):\n" + body + "```\n\nDone.\n"


def lines(n: int) -> str:
    return "".join(f"line {i}: ok\n\n" for i in range(n))


def items(n: int) -> str:
    return "".join(f"- item {i}: ok\n" for i in range(n))


CASES: dict[str, tuple[Callable[[int], str], int]] = {
    "fence 250 lines": (fence, 250),
    "fence 500 lines": (fence, 500),
    "fence 1,000 lines": (fence, 1000),
    "fence 2,000 lines": (fence, 2000),
    "lines 5,400": (lines, 5400),
    "list 5,400 items": (items, 5400),
}


class Clock:
    """live_answer.py's clock: real time, plus `interval` seconds per chunk fed (the time a
    model takes to send them), so renders are spaced as in a real stream without the
    bench waiting for it."""

    def __init__(self) -> None:
        self.ahead = 0.0

    def monotonic(self) -> float:
        return time.monotonic() + self.ahead


def live_view(tree: str | None) -> ModuleType:
    """agentcli/ui/live_answer.py of this checkout, or of the one in `tree` (_common put
    this checkout first on the path, ahead of PYTHONPATH: --tree goes before it)."""
    if tree is not None:
        sys.path.insert(0, str(Path(tree).resolve()))
    from agentcli.ui import live_answer

    where = Path(live_answer.__file__).resolve()
    if tree is not None and not where.is_relative_to(Path(tree).resolve()):
        raise SystemExit(f"--tree {tree}: imported {where} instead")
    return live_answer


def feed(
    live: ModuleType, answer: str, piece: int, interval: float, timeout: float
) -> tuple[float, float] | None:
    """Seconds the screen took for `answer` fed in pieces, `interval` apart, and of them
    the seconds after the last piece; None when it took over `timeout`."""
    out = io.StringIO()
    console = Console(file=out, width=120, height=40, force_terminal=True, color_system="256")
    clock, real = Clock(), live.time
    live.time = clock  # type: ignore[assignment]
    try:
        start = time.perf_counter()
        try:  # the view's own Live, without its clock's thread: the renders the stream
            # asks for are timed
            view = live.LiveView(console, tick=False)
            view.begin("thinking")
        except TypeError:  # a view from before issue 27: a Live without auto-refresh
            view = live.LiveView(console)
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


def goal(name: str, total: str, ratio: str) -> str:
    """The goals (issue 27, bug 8): a 1,000-line block on screen in at most 1 s (an idle
    machine), and twice the lines at most 2.5 times the time (linear, with noise)."""
    if name == "fence 1,000 lines":
        return verdict(float(total), 1.0) if total[0].isdigit() else "miss"
    if name == "fence 2,000 lines":
        return verdict(float(ratio), 2.5) if ratio else "miss"
    return ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--piece", type=int, default=16, help="characters per chunk")
    parser.add_argument("--rate", type=float, default=200.0, help="chunks a second the model sends")
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--tree", help="measure the live view of the checkout in this folder")
    args = parser.parse_args()
    live = live_view(args.tree)
    rounds = 1 if args.quick else args.rounds
    rows = []
    header = ["case", "chars", "chunks", "s", "end s", "x prev", "goal"]
    previous: float | None = None
    for name, (make, size) in CASES.items():
        answer = make(size // 10 if args.quick else size)
        times: list[tuple[float, float]] = []
        for _ in range(rounds):
            result = feed(live, answer, args.piece, 1 / args.rate, args.timeout)
            if result is None:
                break  # ran out of time once: it will again
            times.append(result)
        chunks = -(-len(answer) // args.piece)
        if len(times) == rounds:
            total = median([t[0] for t in times])
            shown = [f"{total:.2f}", f"{median([t[1] for t in times]):.2f}"]
            ratio = f"{total / previous:.2f}" if previous and name.startswith("fence") else ""
            previous = total if name.startswith("fence") else None
        else:
            shown, ratio, previous = [f"> {args.timeout:.0f}", ""], "", None
        row = [name, len(answer), chunks, *shown, ratio, goal(name, shown[0], ratio)]
        rows.append(row)
        print(table(header, [row]), file=sys.stderr, flush=True)  # progress; the table: stdout
    print()
    print(
        f"{machine()}; pieces of {args.piece} characters, {args.rate:.0f} a second"
        f" (the stream lasts chunks / {args.rate:.0f} s); medians of {rounds} rounds;"
        f" live view: {Path(live.__file__).resolve()}"
    )
    print(table(header, rows))


if __name__ == "__main__":
    main()
