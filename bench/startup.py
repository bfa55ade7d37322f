"""Start-up: short commands, and how soon `agentcli chat` takes input (issue 8, goals 1 and 2).

Commands: `agentcli --help`, `agentcli threads list` (an empty database) and `agentcli tools`
(goal: each under 100 ms), beside two baselines run by the same interpreter: `python -c pass`
and `python -c "import typer, rich.console"`. Rounds interleave the five commands; medians.

Chat: `agentcli chat` in a terminal (pexpect) against the scripted model server
(tests/helpers/scripted_server.py). It measures the time from spawn until the prompt `you>` shows
(goal: 150 ms; heavy imports may go on in the background), and until the answer shows when a
message is typed as soon as the prompt is there. Beside it, interleaved: the wall time of
`agentcli run` with the same message and the same answer.

    .venv/bin/python bench/startup.py            # 20 rounds of the commands, 15 chats
    .venv/bin/python bench/startup.py --quick    # one round, no warm-up: keeps the script working

The command timed is the `agentcli` next to the interpreter running this script.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import pexpect
from _common import (
    AGENTCLI,
    ANSWER,
    cli_env,
    interleaved,
    machine,
    median,
    run_once,
    table,
    timer_name,
    verdict,
)

from tests.helpers.scripted_server import ScriptedServer, text

PROMPT = "you>"  # as tests/e2e/test_chat.py detects it
MESSAGE = "hi"
COMMANDS = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "python -c 'import typer, rich.console'": [sys.executable, "-c", "import typer, rich.console"],
    "agentcli --help": [AGENTCLI, "--help"],
    "agentcli threads list": [AGENTCLI, "threads", "list"],
    "agentcli tools": [AGENTCLI, "tools"],
}
COMMAND_GOAL_MS = 100.0
PROMPT_GOAL_MS = 150.0


def commands(rounds: int, warmup: bool, home: Path) -> str:
    times = interleaved(COMMANDS, rounds, cli_env(home), home, warmup=warmup)
    floor = median(times["python -c pass"])
    rows = []
    for name, ms in times.items():
        goal = COMMAND_GOAL_MS if name.startswith("agentcli") else None
        mark = verdict(median(ms), goal) if goal else ""
        rows.append([f"`{name}`", median(ms), min(ms), median(ms) / floor, goal, mark])
    header = ["command", "median ms", "min ms", "x python -c pass", "goal ms", "met"]
    return table(header, rows)


def chat_once(env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """Spawn `agentcli chat`: ms until the prompt shows, and until the answer shows when
    MESSAGE is typed as soon as the prompt is there."""
    start = time.perf_counter()
    child = pexpect.spawn(
        AGENTCLI,
        ["chat"],
        env=env,
        cwd=str(cwd),
        encoding="utf-8",
        timeout=30,
        dimensions=(40, 120),
    )
    try:
        child.expect_exact(PROMPT)
        ready = time.perf_counter()
        child.sendline(MESSAGE)
        child.expect_exact(ANSWER)
        answered = time.perf_counter()
        child.expect_exact(PROMPT)
        child.sendline("/exit")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    if child.exitstatus != 0:
        raise SystemExit(f"agentcli chat exited {child.exitstatus}")
    return (ready - start) * 1000, (answered - start) * 1000


def chat(rounds: int, warmup: bool, home: Path) -> str:
    with ScriptedServer() as server:
        env = cli_env(home, server.base_url)
        ready, answer, run = [], [], []
        for i in range(rounds + warmup):
            server.push(text(ANSWER), text(ANSWER))
            chat_ms = chat_once(env, home)
            run_ms = run_once({"run": [AGENTCLI, "run", MESSAGE]}, env, home)["run"]
            if i >= warmup:
                ready.append(chat_ms[0])
                answer.append(chat_ms[1])
                run.append(run_ms)
        assert len(server.requests) == 2 * (rounds + warmup) and not server.pending
    rows = [
        [
            "chat: launch to prompt ready",
            median(ready),
            min(ready),
            None,
            PROMPT_GOAL_MS,
            verdict(median(ready), PROMPT_GOAL_MS),
        ],
        [
            "chat: launch to answer, message typed at the prompt",
            median(answer),
            min(answer),
            median(answer) / median(run),
            None,
            "",
        ],
        [f"`agentcli run {MESSAGE}` (whole command)", median(run), min(run), 1.0, None, ""],
    ]
    return table(["measure", "median ms", "min ms", "x run", "goal ms", "met"], rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one round of each, no warm-up")
    parser.add_argument("--rounds", type=int, default=20, help="rounds of the short commands")
    parser.add_argument("--chats", type=int, default=15, help="chat sessions (and runs)")
    args = parser.parse_args()
    rounds, chats = (1, 1) if args.quick else (args.rounds, args.chats)
    print(f"{machine()}; whole commands timed with {timer_name()}; agentcli: {AGENTCLI}\n")
    with tempfile.TemporaryDirectory(prefix="agentcli-bench-") as tmp:
        home = Path(tmp)
        print(f"Short commands ({rounds} interleaved rounds):\n")
        print(commands(rounds, not args.quick, home))
        print(
            f"\nInteractive chat against the scripted server ({chats} sessions, each followed"
            " by one run):\n"
        )
        print(chat(chats, not args.quick, home))


if __name__ == "__main__":
    main()
