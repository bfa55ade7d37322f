"""Helpers shared by the benchmarks: the environment, interleaved timings, Markdown tables.

Whole commands are timed with hyperfine when it is installed (one run of each command per
round, `--export-json`), with time.perf_counter around subprocess.run otherwise. Rounds
interleave the commands (A B C A B C ...), so noise on this shared machine hits all of them.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(
    0, str(ROOT)
)  # tests.helpers.scripted_server, agentcli and tools from this checkout

AGENTCLI = str(Path(sys.executable).parent / "agentcli")  # the installed command, same venv
HYPERFINE = shutil.which("hyperfine")
ANSWER = "The scripted answer."  # what the scripted server says; nobody types it


def cli_env(home: Path, base_url: str | None = None) -> dict[str, str]:
    """A private home for agentcli (as tests/e2e/conftest.py sets it up), plain output."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "AGENTCLI_"))}
    # as on a user's machine: compiled modules are cached (with it set, every module whose
    # .pyc is missing or stale is compiled again at each start)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / "config"),
        XDG_DATA_HOME=str(home / "data"),
        XDG_CACHE_HOME=str(home / "cache"),
        AGENTCLI_MODEL="scripted",
        OPENAI_API_KEY="bench",
        NO_COLOR="1",
        PROMPT_TOOLKIT_NO_CPR="1",
        TERM="xterm",
        COLUMNS="120",
    )
    if base_url:
        env["OPENAI_BASE_URL"] = base_url
    for name in ("VISUAL", "EDITOR"):
        env.pop(name, None)
    return env


def run_once(commands: dict[str, list[str]], env: dict[str, str], cwd: Path) -> dict[str, float]:
    """Run each command once, in order; wall time in ms. A failing command raises."""
    if HYPERFINE:
        with tempfile.NamedTemporaryFile(suffix=".json") as out:
            argv = [HYPERFINE, "-N", "--runs", "1", "--style", "none", "--export-json", out.name]
            argv += [shlex.join(command) for command in commands.values()]
            subprocess.run(argv, env=env, cwd=cwd, check=True, capture_output=True)
            results = json.loads(Path(out.name).read_text())["results"]
        return {name: r["times"][0] * 1000 for name, r in zip(commands, results, strict=True)}
    times = {}
    for name, command in commands.items():
        start = time.perf_counter()
        subprocess.run(command, env=env, cwd=cwd, check=True, capture_output=True)
        times[name] = (time.perf_counter() - start) * 1000
    return times


def interleaved(
    commands: dict[str, list[str]],
    rounds: int,
    env: dict[str, str],
    cwd: Path,
    *,
    warmup: bool = True,
    before: Callable[[], None] | None = None,
) -> dict[str, list[float]]:
    """`rounds` rounds of run_once (after one uncounted round if `warmup`); ms per command.

    `before` runs ahead of every round, e.g. to queue the scripted server's replies."""
    times: dict[str, list[float]] = {name: [] for name in commands}
    for i in range(rounds + warmup):
        if before:
            before()
        for name, ms in run_once(commands, env, cwd).items():
            if i >= warmup:
                times[name].append(ms)
    return times


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def verdict(value: float, goal: float) -> str:
    """'pass' when value is at most goal, else 'miss'."""
    return "pass" if value <= goal else "miss"


def table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A Markdown table: the first column left-aligned, the others right-aligned."""
    cells = [[str(c) for c in header], *[[fmt(c) for c in row] for row in rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]

    def line(row: list[str]) -> str:
        pairs = enumerate(zip(row, widths, strict=True))
        parts = [c.rjust(w) if i else c.ljust(w) for i, (c, w) in pairs]
        return "| " + " | ".join(parts) + " |"

    rule = "|".join("-" * (w + 1) + (":" if i else "-") for i, w in enumerate(widths))
    return "\n".join([line(cells[0]), f"|{rule}|", *[line(row) for row in cells[1:]]])


def fmt(value: object) -> str:
    if isinstance(value, float):
        digits = 2 if abs(value) < 10 else 1 if abs(value) < 100 else 0
        return f"{value:.{digits}f}"
    return "" if value is None else str(value)


def timer_name() -> str:
    return f"hyperfine ({HYPERFINE})" if HYPERFINE else "time.perf_counter (no hyperfine)"


def machine() -> str:
    import sqlite3

    python = sys.version.split()[0]
    return f"Python {python}, SQLite {sqlite3.sqlite_version}, {os.cpu_count()} cores"
