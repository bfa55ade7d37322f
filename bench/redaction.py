"""The redactor on big outputs: is its cost linear in the text's length? (issue 25, item 5)

In process, no agentcli run: `Redactor(...)(text)` on text of 100 KB, 1 MB and 10 MB of
three kinds (numbered prose lines, one base64 stream wrapped at 76, one hex stream), with
the model's key alone and with nine secrets (each in its plain and encoded forms: some 80
alternatives in one pattern), and the live view (`RedactedStream`, what a command's output passes
through as it runs) fed the 10 MB in 64 KB chunks. "x10" is a row's time over the row 10
times smaller: near 10 when the cost grows with the size, near 100 with its square. With
--before PATH (a checkout, e.g. /work/main) the same runs with that tree's redactor, which
knows no encoded forms, in a process of its own.

    .venv/bin/python bench/redaction.py                      # 3 rounds, medians
    .venv/bin/python bench/redaction.py --before /work/main  # and the old redactor
    .venv/bin/python bench/redaction.py --quick              # 100 KB and 1 MB, one round
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import random
import string
import subprocess
import sys
import tempfile
import time
from pathlib import Path

KB, MB = 1000, 1000 * 1000
KEY = "sk-test-Zq8vW3kP1xN7mR4tY6uB9cE2"


def texts(size: int) -> dict[str, str]:
    rng = random.Random(size)
    data = rng.randbytes(size * 3 // 4)
    wrapped = base64.encodebytes(data).decode()
    prose = "".join(
        f"line {i:07d}: a quoted word, cafe and plain text to fill\n" for i in range(size // 56)
    )
    return {"prose": prose[:size], "base64": wrapped[:size], "hex": rng.randbytes(size // 2).hex()}


def secrets(many: bool) -> dict[str, str]:
    rng = random.Random(7)
    found = {"OPENAI_API_KEY": KEY}
    if many:
        alphabet = string.ascii_letters + string.digits
        for i in range(8):
            found[f"SERVICE_{i}_TOKEN"] = "".join(rng.choice(alphabet) for _ in range(40))
    return found


def measure(sizes: list[int], rounds: int) -> list[dict[str, object]]:
    from agentcli_tools.redaction import Redactor

    if hasattr(Redactor, "head"):
        from agentcli_tools.redacted_stream import RedactedStream
    else:  # a tree before it (--before): the live view's class was shell.py's _Live
        import importlib

        RedactedStream = importlib.import_module("agentcli_tools.shell")._Live  # type: ignore[misc]

    rows: list[dict[str, object]] = []
    for many in (False, True):
        redactor = Redactor(secrets(many))
        for size in sizes:
            for kind, text in texts(size).items():
                took = []
                for _ in range(rounds):
                    start = time.perf_counter()
                    redactor(text)
                    took.append(time.perf_counter() - start)
                rows.append(
                    {
                        "case": f"{kind} {size // KB} KB",
                        "secrets": 9 if many else 1,
                        "s": sorted(took)[len(took) // 2],
                    }
                )
        text = texts(sizes[-1])["base64"].encode()
        took = []
        for _ in range(rounds):
            live = RedactedStream(lambda shown: None, redactor)
            start = time.perf_counter()
            for at in range(0, len(text), 64 * 1024):
                live.add(text[at : at + 64 * 1024])
            live.flush()
            took.append(time.perf_counter() - start)
        rows.append(
            {
                "case": f"live base64 {sizes[-1] // KB} KB",
                "secrets": 9 if many else 1,
                "s": sorted(took)[len(took) // 2],
            }
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", help="a checkout whose redactor to time beside this one")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)  # a child's
    args = parser.parse_args()
    sizes = [100 * KB, MB] if args.quick else [100 * KB, MB, 10 * MB]
    rounds = 1 if args.quick else args.rounds
    if args.json:
        print(json.dumps(measure(sizes, rounds)))
        return
    after = measure(sizes, rounds)
    before = None
    if args.before:
        command = [sys.executable, __file__, "--json", "--rounds", str(rounds)]
        command += ["--quick"] if args.quick else []
        with tempfile.TemporaryDirectory() as shim:  # agentcli_tools from that tree
            (Path(shim) / "agentcli_tools").symlink_to((Path(args.before) / "tools").resolve())
            out = subprocess.run(
                command,
                env={**os.environ, "PYTHONPATH": shim},
                capture_output=True,
                text=True,
                check=True,
            )
        before = json.loads(out.stdout)
    print(f"| case | secrets | after s | after x10 |{' before s |' if before else ''}")
    print(f"|---|--:|--:|--:|{'--:|' if before else ''}")
    for i, row in enumerate(after):
        smaller = next(
            (
                r
                for r in after[:i]
                if r["secrets"] == row["secrets"]
                and r["case"].split()[0] == row["case"].split()[0]
                and _size(r["case"]) * 10 == _size(row["case"])
            ),
            None,
        )
        x10 = f"{row['s'] / smaller['s']:.1f}" if smaller else ""
        old = f" {before[i]['s']:.3f} |" if before else ""
        print(f"| {row['case']} | {row['secrets']} | {row['s']:.3f} | {x10} |{old}")


def _size(case: str) -> int:
    return int(case.split()[-2])


if __name__ == "__main__":
    main()
