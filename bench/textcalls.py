"""What recovering tool calls written as text costs (issue 16, item 4).

For answers of 100 KB and 1 MB: the held-back stream (agentcli/agent/text_calls/stream.py)
fed in 4-character pieces, as the scripted server streams them, next to joining the same
pieces with no filter; and the parser (agentcli/agent/text_calls/recovery.py) on plain prose,
on one Hermes call carrying the whole size as a `write_file` content, and on hostile text
that repeats an unclosed marker. Medians of --rounds rounds, one process, in-memory.

    .venv/bin/python bench/textcalls.py [--rounds 5]
    .venv/bin/python bench/textcalls.py --quick      # one round (tests/e2e/test_bench.py)
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agentcli.agent.text_calls.recovery import recover  # noqa: E402
from agentcli.agent.text_calls.stream import HeldBack  # noqa: E402

OFFERED = ["read_file", "write_file", "edit_file", "list_dir", "search_files", "shell"]
PIECE = 4


def prose(size: int) -> str:
    line = "The quick brown fox jumps over the lazy dog; [1] and <b> are not markers.\n"
    return (line * (size // len(line) + 1))[:size]


def hermes(size: int) -> str:
    call = {"name": "write_file", "arguments": {"path": "a.txt", "content": "x" * size}}
    return f"Writing it.\n<tool_call>\n{json.dumps(call)}\n</tool_call>"


def hostile(size: int) -> str:
    unit = '<tool_call>{"name": "write_file", "arguments": {"content": "'
    return (unit * (size // len(unit) + 1))[:size]


def stream(text: str, filtered: bool) -> None:
    pieces = [text[i : i + PIECE] for i in range(0, len(text), PIECE)]
    held = HeldBack(OFFERED) if filtered else None
    shown = []
    for piece in pieces:
        shown.append(held.feed(piece) if held is not None else piece)
    "".join(shown)


def median_ms(work: Callable[[], object], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        work()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="one round")
    args = parser.parse_args()
    rounds = 1 if args.quick else args.rounds
    print("| work | 100 KB | 1 MB |")
    print("|---|---|---|")
    cases: list[tuple[str, Callable[[int], Callable[[], object]]]] = [
        ("stream, 4-char pieces, no filter", lambda n: lambda: stream(prose(n), False)),
        ("stream, 4-char pieces, held back", lambda n: lambda: stream(prose(n), True)),
        ("recover: plain prose", lambda n: lambda: recover(prose(n), OFFERED)),
        ("recover: one Hermes write_file call", lambda n: lambda: recover(hermes(n), OFFERED)),
        ("recover: unclosed markers repeated", lambda n: lambda: recover(hostile(n), OFFERED)),
    ]
    for label, make in cases:
        small = median_ms(make(100_000), rounds)
        big = median_ms(make(1_000_000), rounds)
        print(f"| {label} | {small:.1f} ms | {big:.1f} ms |")


if __name__ == "__main__":
    main()
