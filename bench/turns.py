"""Framework overhead per turn, the model excluded, and `threads list` on many threads
(issue 8, goal 4).

Turns: one long-lived Session (SqliteStore, Policy.build(auto_approve=True), the
`calculator` tool) with bench/storage.py's ScriptedModel, in this process. At 1, 100 and 300
turns of history it times `--repeat` calls of `Session.send()` (events drained), and in each
the time spent inside the model's calls (LangChain's `stream()`: building the request from
the history is the model's part, as it is for any client); the framework's part is the rest.
Chat turns: a user message and an answer of 1,500 characters; tool turns: a calculator call
the policy allows, its result, then the answer (two model calls). Goal: the framework's
part under 20 ms per turn, and flat as the thread grows. The turns between the measured
sizes build the history.

Threads: `--threads` threads (one chat turn each) are written through Session.send with the
same model into $XDG_DATA_HOME/agentcli/threads.db, then the installed `agentcli threads list`
is timed on them, interleaved with `agentcli threads list --db` on an empty database. Goal:
under 150 ms with 1,000 threads.

    .venv/bin/python bench/turns.py            # 1, 100, 300 turns; 1,000 threads
    .venv/bin/python bench/turns.py --quick    # 2 and 5 turns, 20 threads, one run each
"""

from __future__ import annotations

import argparse
import gc
import json
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from _common import (
    AGENTCLI,
    cli_env,
    interleaved,
    machine,
    median,
    table,
    timer_name,
    verdict,
)
from agentcli_tools.registry import builtin_tools
from storage import ScriptedModel, text

from agentcli.config import Settings
from agentcli.policy.approval_policy import Policy
from agentcli.session.local import Session
from agentcli.threads.sqlite_backend import SqliteStore

TURN_GOAL_MS = 20.0
LIST_GOAL_MS = 150.0


MODEL_S = [0.0]  # seconds spent inside model calls, all sessions


class TimedModel(ScriptedModel):
    """The scripted model, keeping the time spent inside its calls: the model's share of a
    turn, LangChain's preparation of the request included, as with any real model."""

    def stream(self, *args: Any, **kwargs: Any) -> Iterator[Any]:
        start = time.perf_counter()
        try:
            yield from super().stream(*args, **kwargs)
        finally:
            MODEL_S[0] += time.perf_counter() - start


def session(db: Path, workspace: Path, tools: bool) -> Session:
    return Session(
        Settings(db=str(db), model="bench"),
        SqliteStore(db),
        Policy.build(auto_approve=True),
        workspace=workspace,
        model=TimedModel(tools=tools),
        tools=builtin_tools(["calculator"]),
    )


def send(s: Session, turn: int) -> tuple[float, float]:
    """One turn, events drained: its wall time in ms, and the model's part of it."""
    model_before = MODEL_S[0]
    start = time.perf_counter()
    events = list(s.send(f"Question {turn}: " + text(-turn, 200)))
    elapsed = (time.perf_counter() - start) * 1000
    assert events[-1].status == "done", events[-1]
    return elapsed, (MODEL_S[0] - model_before) * 1000


def turns(kind: str, sizes: list[int], repeat: int, tmp: Path) -> list[list[Any]]:
    """Rows: the median ms per send() of one Session at each size of its history."""
    s = session(tmp / f"{kind}.db", tmp, tools=kind == "tool")
    history = 0
    rows: list[list[Any]] = []
    send(s, 0)  # the first turn also compiles the graph and opens the database: not counted
    history += 1
    gc.freeze()  # what the chat's process does once its session is ready (cli/gc_tuning.py)
    for size in sizes:
        while history < size:
            send(s, history)
            history += 1
        walls, models = [], []
        for _ in range(repeat):
            wall, model = send(s, history)
            walls.append(wall)
            models.append(model)
            history += 1
        framework = [wall - model for wall, model in zip(walls, models, strict=True)]
        ms = median(framework)
        first = rows[0][4] if rows else ms
        rows.append(
            [
                f"{kind} turns",
                size,
                median(walls),
                median(models),
                ms,
                min(framework),
                ms / first,
                TURN_GOAL_MS,
                verdict(ms, TURN_GOAL_MS),
            ]
        )
    messages = len(s.state().values["messages"])
    assert messages == history * (4 if kind == "tool" else 2), messages
    s.store.close()
    return rows


def threads(count: int, rounds: int, warmup: bool, home: Path) -> tuple[str, str]:
    env = cli_env(home)
    db = Path(env["XDG_DATA_HOME"]) / "agentcli" / "threads.db"  # where agentcli looks
    db.parent.mkdir(parents=True)
    (home / "work").mkdir()
    s = session(db, home / "work", tools=False)
    start = time.perf_counter()
    for i in range(count):
        s.new_thread()
        send(s, i)
    built = time.perf_counter() - start
    s.store.close()
    listed = subprocess.run(
        [AGENTCLI, "threads", "list", "--json"],
        env=env,
        cwd=home,
        capture_output=True,
        text=True,
        check=True,
    )
    assert len(json.loads(listed.stdout)) == count, listed.stdout[-500:]
    commands = {
        f"`agentcli threads list`, {count} threads": [AGENTCLI, "threads", "list"],
        "`agentcli threads list`, no thread (--db)": [
            AGENTCLI,
            "threads",
            "list",
            "--db",
            str(home / "empty.db"),
        ],
    }
    times = interleaved(commands, rounds, env, home, warmup=warmup)
    rows = []
    for name, ms in times.items():
        goal = LIST_GOAL_MS if "no thread" not in name else None
        rows.append([name, median(ms), min(ms), goal, verdict(median(ms), goal) if goal else ""])
    note = (
        f"{count} threads written in {built:.1f} s ({built / count * 1000:.1f} ms each),"
        f" database {db.stat().st_size / 1e6:.1f} MB; {rounds} interleaved rounds,"
        f" timed with {timer_name()}"
    )
    return note, table(["command", "median ms", "min ms", "goal ms", "met"], rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 and 5 turns, 20 threads, 1 run")
    parser.add_argument("--sizes", default="1,100,300", help="turns of history, comma-separated")
    parser.add_argument("--repeat", type=int, default=15, help="turns timed at each size")
    parser.add_argument("--threads", type=int, default=1000, help="threads for `threads list`")
    parser.add_argument("--rounds", type=int, default=20, help="runs of `threads list`")
    args = parser.parse_args()
    if args.quick:
        sizes, repeat, count, rounds = [2, 5], 1, 20, 1
    else:
        sizes = [int(n) for n in args.sizes.split(",")]
        repeat, count, rounds = args.repeat, args.threads, args.rounds
    print(f"{machine()}\n")
    with tempfile.TemporaryDirectory(prefix="agentcli-bench-") as tmp:
        rows = turns("chat", sizes, repeat, Path(tmp)) + turns("tool", sizes, repeat, Path(tmp))
        print(
            f"Session.send() per turn, scripted model in process ({repeat} turns timed at each"
            " size); median ms is the framework's part: the turn less its model calls\n"
        )
        header = [
            "turn kind",
            "turns of history",
            "turn ms",
            "model ms",
            "median ms",
            "min ms",
            "x first size",
            "goal ms",
            "met",
        ]
        print(table(header, rows))
        note, listing = threads(count, rounds, not args.quick, Path(tmp) / "home")
        print(f"\n`agentcli threads list`: {note}\n")
        print(listing)


if __name__ == "__main__":
    main()
