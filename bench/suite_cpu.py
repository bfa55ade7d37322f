"""Where the test suite's time goes: a pytest plugin that writes, for each test, its wall
time, the CPU its worker used and the CPU of the processes it started and waited for
(the installed agentcli, servers, shells; those started warm, tests/helpers/warm_run.py,
as the warm-start server reports them).

    PYTHONPATH=bench .venv/bin/pytest -q -n 8 -p suite_cpu -p no:cacheprovider
    SUITE_CPU=/tmp/suite.tsv ...   # where the rows go (default: suite_cpu.tsv here)

Then `python bench/suite_cpu.py FILE` sums them by folder and lists the costliest tests.
"""

from __future__ import annotations

import os
import resource
import sys
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

_OUT = os.environ.get("SUITE_CPU", "suite_cpu.tsv")


def _cpu() -> tuple[float, float]:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    warm = sys.modules.get("tests.helpers.warm_run")  # commands started warm: not children
    started = children.ru_utime + children.ru_stime + getattr(warm, "cpu_used", 0.0)
    return own.ru_utime + own.ru_stime, started


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: Any, nextitem: Any) -> Iterator[None]:
    wall, (own, children) = time.monotonic(), _cpu()
    yield
    own_after, children_after = _cpu()
    with open(_OUT, "a") as out:
        out.write(
            f"{item.nodeid}\t{time.monotonic() - wall:.2f}\t{own_after - own:.2f}"
            f"\t{children_after - children:.2f}\n"
        )


def main(path: str) -> None:
    rows = [line.rstrip("\n").split("\t") for line in open(path)]
    tests = [(r[0], float(r[1]), float(r[2]), float(r[3])) for r in rows if len(r) == 4]
    own, started = sum(t[2] for t in tests), sum(t[3] for t in tests)
    print(f"{len(tests)} tests: {own:,.0f} s CPU in the workers,", end=" ")
    print(f"{started:,.0f} s in what they started")
    by_folder: Counter[str] = Counter()
    for name, _, mine, theirs in tests:
        by_folder[name.split("::")[0].split("/")[1]] += mine + theirs
    for folder, cpu in by_folder.most_common():
        print(f"  {folder:<10} {cpu:8,.0f} s")
    print("costliest:")
    for name, _, mine, theirs in sorted(tests, key=lambda t: -(t[2] + t[3]))[:15]:
        print(f"  {mine + theirs:6.1f} s  {name}")


if __name__ == "__main__":
    main(sys.argv[1])
