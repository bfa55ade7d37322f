"""What a shell command's start costs: `bash -c true` to its exit status (issue 13, item 8).

Three ways to run it, interleaved in each round (A B C A B C ...), timed in this process
from the start until the output pipe's EOF and the exit status:

- bare: `subprocess.Popen` of bash, stdout a pipe, nothing else;
- per-command supervisor (before): a Python start per command, the design this replaced
  (bench/_percommand_supervise.py, with its lifeline socket);
- long-lived supervisor (after): `tools.supervised.Supervised`, as the shell tool runs a
  command: the process's supervisor forks a call supervisor, which runs bash.

Goal: the supervisor adds at most 10 ms to a command's start over the bare Popen (the
sandbox's confinement has the same budget). The first command of a process also starts the
supervisor: timed in fresh interpreters, apart.

    .venv/bin/python bench/toolstart.py            # 60 rounds, 5 fresh processes
    .venv/bin/python bench/toolstart.py --quick    # 3 rounds, 1 process: keeps the script working
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from _common import ROOT, machine, median, table, verdict
from agentcli_tools.supervised import Supervised

BEFORE = str(Path(__file__).with_name("_percommand_supervise.py"))
COMMAND = ["bash", "-c", "true"]
GOAL_MS = 10.0  # over the bare Popen
FIRST = """
import time
from agentcli_tools.supervised import Supervised
start = time.perf_counter()
process = Supervised(["bash", "-c", "true"], grace=0.5, cwd=".", env={"PATH": "/usr/bin:/bin"})
process.stdout.read()
assert process.wait() == 0
process.close()
print((time.perf_counter() - start) * 1000)
"""


def bare(cwd: Path, env: dict[str, str]) -> None:
    process = subprocess.Popen(
        COMMAND,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    assert process.stdout is not None
    process.stdout.read()
    process.stdout.close()
    assert process.wait() == 0


def per_command(cwd: Path, env: dict[str, str]) -> None:
    mine, theirs = socket.socketpair()
    with mine:
        process = subprocess.Popen(
            [sys.executable, "-S", "-I", BEFORE, str(theirs.fileno()), "0.5", "--", *COMMAND],
            pass_fds=(theirs.fileno(),),
            start_new_session=True,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        theirs.close()
        assert process.stdout is not None
        process.stdout.read()
        process.stdout.close()
        assert process.wait() == 0


def long_lived(cwd: Path, env: dict[str, str]) -> None:
    process = Supervised(COMMAND, grace=0.5, cwd=cwd, env=env)
    process.stdout.read()
    process.stdout.close()
    assert process.wait() == 0
    process.close()


WAYS: dict[str, Callable[[Path, dict[str, str]], None]] = {
    "bare Popen: `bash -c true`": bare,
    "per-command supervisor (before)": per_command,
    "long-lived supervisor, per call (after)": long_lived,
}


def first_calls(processes: int, cwd: Path) -> list[float]:
    """ms of the first command in fresh interpreters (the supervisor starts with it)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return [
        float(
            subprocess.run(
                [sys.executable, "-c", FIRST],
                cwd=cwd,
                env=env,
                check=True,
                capture_output=True,
                text=True,
            ).stdout
        )
        for _ in range(processes)
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 rounds, one fresh process")
    parser.add_argument("--rounds", type=int, default=60, help="interleaved rounds")
    parser.add_argument("--processes", type=int, default=5, help="fresh processes, first call")
    args = parser.parse_args()
    rounds, processes = (3, 1) if args.quick else (args.rounds, args.processes)
    load = os.getloadavg()[0]
    print(f"{machine()}; load average {load:.1f}; {rounds} interleaved rounds, time.perf_counter\n")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"}
    times: dict[str, list[float]] = {name: [] for name in WAYS}
    with tempfile.TemporaryDirectory(prefix="agentcli-bench-") as tmp:
        cwd = Path(tmp)
        long_lived(cwd, env)  # warm-up: the supervisor starts, bash is in the page cache
        for _ in range(rounds):
            for name, way in WAYS.items():
                start = time.perf_counter()
                way(cwd, env)
                times[name].append((time.perf_counter() - start) * 1000)
        first = first_calls(processes, cwd)
    floor = median(times["bare Popen: `bash -c true`"])
    rows: list[list[object]] = []
    for name, ms in times.items():
        goal = GOAL_MS if "after" in name else None
        over = median(ms) - floor
        mark = verdict(over, GOAL_MS) if goal else ""
        rows.append([name, median(ms), min(ms), over, goal, mark])
    rows.append(
        [
            "first call of a process (starts the supervisor)",
            median(first),
            min(first),
            median(first) - floor,
            None,
            "",
        ]
    )
    print(table(["command start", "median ms", "min ms", "over bare ms", "goal ms", "met"], rows))


if __name__ == "__main__":
    main()
