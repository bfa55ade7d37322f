"""Big outputs end to end: a long answer and a big write_file, streamed (issue 13, item 14).

Each case queues a reply on the scripted server (tests/helpers/scripted_server.py) streamed in
fragments of --piece characters (64: a few tokens, as real servers send them) and runs the
installed command, `agentcli run MESSAGE -o json --auto-approve`, in a private home:

- answer N: one text answer of N characters; the JSON output's "final" must be that text;
- write_file N: a write_file call whose content has N characters (lines with quotes,
  backslashes and non-ASCII, so the JSON arguments hold escapes cut across fragments), then
  a short answer; the file written must hold those characters exactly.

With --before PATH (a checkout of the code before this change, e.g. /work/main), every case
also runs with PYTHONPATH=PATH, in the same rounds (interleaved), so both columns come from
one run on one machine. A run longer than --timeout seconds is stopped and shown as "> T".
"x10" is a row's time over the time of the row 10 times smaller: about 10 when the cost
grows with the size, about 100 when it grows with its square.

    .venv/bin/python bench/bigoutput.py                           # 3 rounds
    .venv/bin/python bench/bigoutput.py --before /work/main       # and the old code beside it
    .venv/bin/python bench/bigoutput.py --quick                   # small sizes, one round
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

from _common import AGENTCLI, ROOT, cli_env, machine, median, table

from tests.helpers.scripted_server import ScriptedServer, text, tool_calls

KB = 1000
MB = 1000 * KB
SIZES = {"answer": [100 * KB, MB, 5 * MB, 10 * MB], "write_file": [100 * KB, MB, 10 * MB]}
QUICK = {"answer": [10 * KB, 100 * KB], "write_file": [10 * KB, 100 * KB]}
LINE = 'line {:07d}: a "quoted" word, a back\\slash, café ✓ and some plain text to fill\n'


def payload(size: int) -> str:
    """`size` characters of text: numbered lines, with characters JSON must escape."""
    lines, total, i = [], 0, 0
    while total < size:
        line = LINE.format(i)
        lines.append(line)
        total += len(line)
        i += 1
    return "".join(lines)[:size]


def run_case(
    kind: str, size: int, tree: str, server: ScriptedServer, home: Path, timeout: float
) -> float | None:
    """Seconds for one `agentcli run`, its result checked; None when it ran out of time."""
    content = payload(size)
    work = home / "work"
    work.mkdir(exist_ok=True)
    target = work / "big.txt"
    target.unlink(missing_ok=True)
    if kind == "answer":
        server.push(text(content))
    else:
        server.push(
            tool_calls(("write_file", {"path": "big.txt", "content": content})), text("written")
        )
    env = {**cli_env(home, server.base_url), "PYTHONPATH": tree}
    argv = [AGENTCLI, "run", "go", "-o", "json", "--auto-approve", "--workspace", str(work)]
    start = time.perf_counter()
    try:
        done = subprocess.run(argv, env=env, cwd=work, capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        while server.pending:  # the replies it did not get to
            server._replies.clear()
        return None
    seconds = time.perf_counter() - start
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-2000:]
    final = json.loads(done.stdout)["final"]
    if kind == "answer":
        assert final == content, f"{kind} {size}: the answer did not arrive intact"
    else:
        assert final == "written"
        written = target.read_bytes()
        assert written == content.encode(), f"{kind} {size}: the file is not the content"
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, one round")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds")
    parser.add_argument("--piece", type=int, default=64, help="characters per fragment")
    parser.add_argument("--before", metavar="PATH", help="also time the code in PATH")
    parser.add_argument("--timeout", type=float, default=300, help="seconds per run")
    parser.add_argument("--max-size", type=int, help="leave out larger sizes")
    args = parser.parse_args()
    rounds = 1 if args.quick else args.rounds
    sizes = QUICK if args.quick else SIZES
    cases = [
        (kind, size)
        for kind, all_sizes in sizes.items()
        for size in all_sizes
        if not args.max_size or size <= args.max_size
    ]
    trees = {"this tree": str(ROOT)}
    if args.before:
        trees["before"] = str(Path(args.before).resolve())
    times: dict[tuple[str, int, str], list[float | None]] = {}
    with (
        tempfile.TemporaryDirectory(prefix="agentcli-bench-") as tmp,
        ScriptedServer(piece=args.piece) as server,
    ):
        home = Path(tmp)
        for _ in range(rounds):
            for kind, size in cases:
                for name, tree in trees.items():
                    # once a tree has run out of time at a size, that size and larger ones
                    # would again: not run
                    if any(
                        t is None
                        for (k, s, n), ts in times.items()
                        for t in ts
                        if k == kind and s <= size and n == name
                    ):
                        times.setdefault((kind, size, name), []).append(None)
                        continue
                    seconds = run_case(kind, size, tree, server, home, args.timeout)
                    times.setdefault((kind, size, name), []).append(seconds)
    print(
        f"{machine()}; {rounds} interleaved round(s); fragments of {args.piece} characters;"
        f" time.perf_counter around `agentcli run ... -o json` ({AGENTCLI})"
    )
    print(f"trees: {', '.join(f'{n} = {t}' for n, t in trees.items())}; CPU count {os.cpu_count()}")
    print()
    # the first time column is "median ms", as in the other scripts' tables
    header = ["case", *[f"{n} median ms".removeprefix("this tree ") for n in trees]]
    header += [f"{n} x10".removeprefix("this tree ") for n in trees]
    rows = []
    for kind, size in cases:
        cells: list[object] = [f"{kind} {size // KB:,} KB"]
        growth: list[object] = []
        for name in trees:
            now = _median(times[kind, size, name])
            smaller = times.get((kind, size // 10, name))
            cells.append(f"> {args.timeout * 1000:.0f}" if now is None else now * 1000)
            before = _median(smaller) if smaller else None
            growth.append(now / before if now is not None and before else None)
        rows.append([*cells, *growth])
    print(table(header, rows))


def _median(values: list[float | None]) -> float | None:
    """The median, or None when any run ran out of time (then it is more than the limit)."""
    return None if any(v is None for v in values) else median([v for v in values if v])


if __name__ == "__main__":
    main()
