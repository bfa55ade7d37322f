"""The benchmarks still run: each script with --quick prints its table's rows.

No timing is checked here; the figures are in bench/README.md. A row's first figure is a
number ("12.3", "2.9 ms", or "min / median / max"); `EXACT` cells are checked too.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys

import pytest

from tests.helpers import ROOT
from tests.helpers.installed import missing

LLM = ROOT / "bench" / ".cache" / "llm-venv" / "bin" / "llm"  # bench/run.py's own llm, if any

ROWS = {
    "startup.py": [
        "`python -c pass`",
        "`python -c 'import typer, rich.console'`",
        "`agentcli --help`",
        "`agentcli threads list`",
        "`agentcli tools`",
        "`agentcli threads show ID`",
        "`agentcli chat, no key: the error`",
        "terminal: `agentcli --help`, spawn to exit",
        "chat: launch to prompt ready",
        "chat: launch to answer, message typed at the prompt",
        "resume: launch to the review panel",
        "resume: CPU used by the time the panel shows",
        "`agentcli run hi` (whole command)",
    ],
    "run.py": ["`agentcli run hi`", "bench/minimal.py |", "bench/minimal.py --gc"],
    "turns.py": [
        "chat turns | 2 |",
        "chat turns | 5 |",
        "tool turns | 2 |",
        "tool turns | 5 |",
        "`agentcli threads list`, 20 threads",
        "`agentcli threads list`, no thread (--db)",
    ],
    "bigoutput.py": ["answer 10 KB", "answer 100 KB", "write_file 10 KB", "write_file 100 KB"],
    "toolstart.py": [
        "bare Popen: `bash -c true`",
        "per-command supervisor (before)",
        "long-lived supervisor, per call (after)",
        "first call of a process (starts the supervisor)",
    ],
    "sandbox.py": [  # on a kernel with Landlock and bubblewrap installed (.ci/run installs it)
        "`--sandbox off`",
        "workspace-write, git workspace (30 entries)",
        "workspace-write, no repository",
        "read-only",
        "workspace-write, hosts listed (egress proxy)",
        "workspace-write, Landlock alone (no namespace)",
        "workspace-write, bubblewrap",
    ],
    "snapshots.py": [
        "first snapshot (every file hashed)",
        "snapshot, one file changed",
        "snapshot, nothing changed",
        "a write_file call's bracket (before, after, record)",
        "a shell call's bracket (ignored files listed)",
    ],
    "plan.py": [
        "plan mode",
        "loop, one call a turn",
        "loop, parallel calls",
        "speed-up (x)",
        "tokens (share)",
        "speed-up over the parallel loop (x)",
        "tokens vs the parallel loop",
        "shell tasks, plan mode",
        "shell tasks, loop, one call a turn",
        "shell tasks, loop, parallel calls",
        "shell tasks, speed-up (x)",
    ],
    "parallel.py": [
        "reads, policy-approved: send() to the answer",
        "reads, person-approved: decide() to the answer",
        "changes, in turn: send() to the answer",
        "reads, person-approved: send() to the review",
    ],
    "context.py": [  # 30 turns against an 8k window, compaction on and off
        "prompt tokens, turn 10",
        "prompt tokens, turn 20",
        "prompt tokens, turn 30",
        "after the first compaction: min / median / max",
        "largest request (tokens)",
        "requests over the 8192-token window",
        "summary requests",
        "first turn smaller than one before it",
        "wall time (s)",
    ],
    "textcalls.py": [
        "stream, 4-char pieces, no filter",
        "stream, 4-char pieces, held back",
        "recover: plain prose",
        "recover: one Hermes write_file call",
        "recover: unclosed markers repeated",
    ],
    "render.py": [
        "fence 250 lines",
        "fence 500 lines",
        "fence 1,000 lines",
        "fence 2,000 lines",
        "lines 5,400",
        "list 5,400 items",
    ],
    "redraws.py": ["`agentcli chat`, a 15 KB answer"],
    "window.py": [  # 6 tool turns in a 2,048 window, native and text; the fixed part
        "tools offered",
        "fixed part (agentcli's estimate)",
        "model requests",
        "summary requests",
        "largest request (tokens)",
        "requests over 2,048",
        "native: 8 tools, full (all)",
        "native: 8 tools, terse (all)",
        "native: what a 2,048 window offers",
        "text: 8 tools, full (all)",
        "text: 8 tools, terse (all)",
        "text: what a 2,048 window offers",
    ],
    "questions.py": ["mode ask", "mode auto"],  # --quick: the two modes the goal compares
    "telemetry.py": [
        f"`agentcli run hi`, {kind}: {what}"
        for what in ("to the model's request", "to the exit", "CPU")
        for kind in ("no endpoint", "OTEL endpoint set")
    ],
}
# cells whose value is known: (label, column) -> value
EXACT = {
    "context.py": {("requests over the 8192-token window", 1): "0"},  # compaction on: none
    "window.py": {("requests over 2,048", 1): "0", ("requests over 2,048", 2): "0"},
    # every dangerous call asked or refused, in every mode; mode ask runs nothing by itself
    "questions.py": {("mode ask", 5): "6 of 6", ("mode auto", 5): "6 of 6", ("mode ask", 2): "0"},
}
# rows with a pass/miss
GOALS = {
    "startup.py": 6,
    "run.py": 1,
    "turns.py": 5,
    "parallel.py": 2,
    "plan.py": 3,
    "bigoutput.py": 0,
    "toolstart.py": 1,
    "sandbox.py": 5,
    "snapshots.py": 2,
    "context.py": 0,
    "textcalls.py": 0,
    "render.py": 2,
    "redraws.py": 0,
    "questions.py": 1,
    "window.py": 0,
    "telemetry.py": 0,
}
FIGURE = re.compile(r"\d+(\.\d+)?( / \d+(\.\d+)?)*( ms| s)?")


def rows(stdout: str) -> list[list[str]]:
    """The cells of every Markdown table row (header and rule lines left out: a header is
    the row a rule line follows)."""
    found = []
    lines = stdout.splitlines()
    for line, after in zip(lines, [*lines[1:], ""], strict=True):
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        header = re.fullmatch(r"\|[-:| ]+\|", after.strip()) is not None
        if line.startswith("| ") and not header:
            found.append(cells)
    return found


def normalised(row: list[str]) -> str:
    return " | ".join(row)


# the scripts whose --quick run still takes many agentcli starts run with -m slow (.ci/slow)
# questions.py --quick starts agentcli about 40 times, each a second or two (a minute idle)
TIMEOUTS = {"questions.py": 900}
HEAVY = {
    "render.py",
    "bigoutput.py",
    "context.py",
    "run.py",
    "startup.py",
    "questions.py",
    "redraws.py",
}


@pytest.mark.parametrize(
    "script",
    [pytest.param(s, marks=pytest.mark.slow) if s in HEAVY else s for s in sorted(ROWS)],
)
def test_the_benchmark_runs_quickly_and_prints_its_table(script: str) -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / script), "--quick"],
        capture_output=True,
        text=True,
        timeout=TIMEOUTS.get(script, 300),
    )
    assert done.returncode == 0, done.stderr
    table = rows(done.stdout)
    expected = list(ROWS[script])
    if script == "sandbox.py" and shutil.which("bwrap") is None:
        missing("bubblewrap", "the sandbox benchmark's fallback row")
    if script == "run.py":
        if LLM.exists():
            expected.append("`llm -m scripted hi`")
        else:
            assert "llm: not installed" in done.stdout and "row skipped" in done.stdout
    for label in expected:
        matching = [row for row in table if normalised(row).startswith(label)]
        assert len(matching) == 1, f"{label!r} not once in:\n{done.stdout}"
        assert FIGURE.fullmatch(matching[0][1]), matching[0]  # the figure (a median), a number
        for (where, column), value in EXACT.get(script, {}).items():
            if label == where:
                assert matching[0][column] == value, matching[0]
    assert len(table) == len(expected), done.stdout
    assert sum(row[-1] in ("pass", "miss") for row in table) == GOALS[script], done.stdout
