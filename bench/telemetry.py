"""What OpenTelemetry export costs a run (issue 28): `agentcli run hi` against the scripted
model server, without an endpoint and with one (an OTLP/HTTP receiver on 127.0.0.1 that
decodes what it gets, tests/helpers/otlp_receiver.py), interleaved, each round: the wall
time from the command's start to the model's request (the first thing a person waits for),
to the command's exit (with the last spans and metrics sent), and the CPU time it used.

    .venv/bin/python bench/telemetry.py            # 15 rounds
    .venv/bin/python bench/telemetry.py --quick    # one round, no warm-up: keeps it working
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
import time
from pathlib import Path

from _common import AGENTCLI, cli_env, machine, median, table

from tests.helpers.otlp_receiver import receiving
from tests.helpers.scripted_server import ScriptedServer, text


def one_run(env: dict[str, str], cwd: Path, server: ScriptedServer) -> tuple[float, float, float]:
    """(ms to the model's request, ms to the exit, ms of CPU) of one `agentcli run hi`."""
    server.push(text("done"))
    seen = len(server.requests)
    start = time.perf_counter()
    process = subprocess.Popen([AGENTCLI, "run", "hi"], env=env, cwd=cwd, stdout=subprocess.DEVNULL)
    while len(server.requests) == seen and process.poll() is None:
        time.sleep(0.001)
    asked = time.perf_counter()
    _, status, usage = os.wait4(process.pid, 0)
    ended = time.perf_counter()
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode:
        raise SystemExit(f"agentcli run failed ({process.returncode})")
    cpu = usage.ru_utime + usage.ru_stime
    return (asked - start) * 1000, (ended - start) * 1000, cpu * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    rounds, warmup = (1, 0) if args.quick else (args.rounds, 1)
    kinds = ("no endpoint", "OTEL endpoint set")
    figures: dict[str, list[tuple[float, float, float]]] = {kind: [] for kind in kinds}
    with tempfile.TemporaryDirectory() as tmp, ScriptedServer() as server, receiving() as otlp:
        work = Path(tmp) / "work"
        work.mkdir()
        base = cli_env(Path(tmp) / "home", server.base_url)
        envs = {kinds[0]: base, kinds[1]: {**base, **otlp.env()}}
        for round_ in range(rounds + warmup):
            for kind in kinds:
                measured = one_run(envs[kind], work, server)
                if round_ >= warmup:
                    figures[kind].append(measured)
        sent = len(otlp.requests)
    rows = []
    for what, at in (("to the model's request", 0), ("to the exit", 1), ("CPU", 2)):
        for kind in kinds:
            values = [f[at] for f in figures[kind]]
            rows.append((f"`agentcli run hi`, {kind}: {what}", median(values), min(values)))
    print(table(["command", "median ms", "min ms"], rows))
    print(f"\n{rounds} rounds, interleaved; the receiver got {sent} requests; {machine()}")


if __name__ == "__main__":
    main()
