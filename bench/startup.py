"""Start-up: short commands, and how soon `agentcli chat` and `resume` take input (issues 8, 27).

Commands, interleaved rounds, medians: `agentcli --help`, `threads list`, `tools`,
`threads show ID` (a thread of two messages and a call) and the no-key error (`agentcli chat`
with no key and no server: the set-up guide, exit 2), beside two baselines run by the same
interpreter: `python -c pass` and `python -c "import typer, rich.console"`. Goals: `--help`,
`threads list`, `tools` each under 100 ms; the no-key error at most 1.5x `--help`.

Terminal (pexpect, 120x40), against the scripted model server
(tests/helpers/scripted_server.py), interleaved, each round: `agentcli --help` from spawn to
its exit (the same clock as the rest of this table: the base of its ratios); `agentcli chat`
until the prompt `you>` shows (goal: at most 3x `--help`; the session loads in the
background), and until the answer shows when a message is typed as soon as the prompt is
there; `agentcli resume ID` on a thread parked at a review, until the review's choice line
shows (goal: at most 1 s on an idle machine), and the CPU time it had used by then; and
the wall time of `agentcli run` with the same message and answer.

    .venv/bin/python bench/startup.py            # 20 rounds of the commands, 15 chats
    .venv/bin/python bench/startup.py --quick    # one round, no warm-up: keeps the script working

The command timed is the `agentcli` next to the interpreter running this script.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
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

from tests.helpers.scripted_server import ScriptedServer, text, tool_calls

PROMPT = "you>"  # as tests/e2e/test_chat.py detects it
CHOICE = r"\[a\]pprove.*\[q\]uit >"  # the review's choice line (tests/helpers/terminal.py)
MESSAGE = "hi"
COMMAND_GOAL_MS = 100.0
NO_KEY_GOAL = 1.5  # x --help
PROMPT_GOAL = 3.0  # x --help
PANEL_GOAL_MS = 1000.0
# the no-key error exits 2 by design: `sh` turns that one exit code into success (a few ms)
NO_KEY = ["env", "-u", "OPENAI_API_KEY", "-u", "OPENAI_BASE_URL", "sh", "-c"]
NO_KEY_SCRIPT = '"$0" chat 2>/dev/null; test $? -eq 2'


def commands(thread: str) -> dict[str, list[str]]:
    return {
        "python -c pass": [sys.executable, "-c", "pass"],
        "python -c 'import typer, rich.console'": [
            sys.executable,
            "-c",
            "import typer, rich.console",
        ],
        "agentcli --help": [AGENTCLI, "--help"],
        "agentcli threads list": [AGENTCLI, "threads", "list"],
        "agentcli tools": [AGENTCLI, "tools"],
        "agentcli threads show ID": [AGENTCLI, "threads", "show", thread],
        "agentcli chat, no key: the error": [*NO_KEY, NO_KEY_SCRIPT, AGENTCLI],
    }


def short_commands(rounds: int, warmup: bool, home: Path, thread: str) -> str:
    times = interleaved(commands(thread), rounds, cli_env(home), home, warmup=warmup)
    floor, helped = median(times["python -c pass"]), median(times["agentcli --help"])
    rows = []
    for name, ms in times.items():
        goal, mark = "", ""
        if name.endswith(("--help", "threads list", "tools")):
            goal, mark = f"{COMMAND_GOAL_MS:.0f} ms", verdict(median(ms), COMMAND_GOAL_MS)
        elif "no key" in name:
            goal, mark = f"{NO_KEY_GOAL}x --help", verdict(median(ms) / helped, NO_KEY_GOAL)
        rows.append(
            [f"`{name}`", median(ms), min(ms), median(ms) / floor, median(ms) / helped, goal, mark]
        )
    header = ["command", "median ms", "min ms", "x python -c pass", "x --help", "goal", "met"]
    return table(header, rows)


def spawn(env: dict[str, str], cwd: Path, *args: str) -> pexpect.spawn:
    return pexpect.spawn(
        AGENTCLI,
        list(args),
        env=env,
        cwd=str(cwd),
        encoding="utf-8",
        timeout=60,
        dimensions=(40, 120),
    )


def help_once(env: dict[str, str], cwd: Path) -> float:
    """`agentcli --help` in a terminal: ms from spawn until it has exited."""
    start = time.perf_counter()
    child = spawn(env, cwd, "--help")
    child.expect(pexpect.EOF)
    child.close()
    return (time.perf_counter() - start) * 1000


def chat_once(env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """Spawn `agentcli chat`: ms until the prompt shows, and until the answer shows when
    MESSAGE is typed as soon as the prompt is there."""
    start = time.perf_counter()
    child = spawn(env, cwd, "chat")
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


def panel_once(env: dict[str, str], cwd: Path, thread: str) -> tuple[float, float]:
    """Spawn `agentcli resume ID` on a thread parked at a review: ms until the review's
    choice line shows, and the CPU ms the process had used by then (all its threads; less
    moved by the load than the wall time). Then the process is stopped (SIGHUP, as a
    closed terminal): the calls stay pending for the next round."""
    start = time.perf_counter()
    child = spawn(env, cwd, "resume", thread)
    try:
        child.expect(CHOICE)
        shown = time.perf_counter()
        cpu = cpu_ms(child.pid)
    finally:
        child.close(force=True)
    return (shown - start) * 1000, cpu


def cpu_ms(pid: int) -> float:
    """User and system CPU ms of a running process (Linux /proc; nan elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def park(env: dict[str, str], cwd: Path, server: ScriptedServer) -> str:
    """A thread parked at a review of one write_file call: its id."""
    server.push(tool_calls(("write_file", {"path": "a.txt", "content": "x\n"})))
    done = subprocess.run(
        [AGENTCLI, "run", "write a.txt"], env=env, cwd=cwd, capture_output=True, text=True
    )
    if done.returncode != 3:  # 3: calls wait for review
        raise SystemExit(f"agentcli run exited {done.returncode}: {done.stderr}")
    listed = subprocess.run(
        [AGENTCLI, "threads", "list", "--json"], env=env, cwd=cwd, capture_output=True, text=True
    )
    return str(json.loads(listed.stdout)[0]["thread_id"])


def terminal(rounds: int, warmup: bool, home: Path, server: ScriptedServer, thread: str) -> str:
    env = cli_env(home, server.base_url)
    helped, ready, answer, panel, panel_cpu, run = [], [], [], [], [], []
    for i in range(rounds + warmup):
        server.push(text(ANSWER), text(ANSWER))
        help_ms = help_once(env, home)
        chat_ms = chat_once(env, home)
        panel_ms, cpu = panel_once(env, home, thread)
        run_ms = run_once({"run": [AGENTCLI, "run", MESSAGE]}, env, home)["run"]
        if i >= warmup:
            helped.append(help_ms)
            ready.append(chat_ms[0])
            answer.append(chat_ms[1])
            panel.append(panel_ms)
            panel_cpu.append(cpu)
            run.append(run_ms)
    assert not server.pending, "every answer queued was asked for"
    base = median(helped)
    prompt_mark = verdict(median(ready) / base, PROMPT_GOAL)
    rows = [
        ["terminal: `agentcli --help`, spawn to exit", base, min(helped), 1.0, "", ""],
        [
            "chat: launch to prompt ready",
            median(ready),
            min(ready),
            median(ready) / base,
            f"{PROMPT_GOAL}x --help",
            prompt_mark,
        ],
        [
            "chat: launch to answer, message typed at the prompt",
            median(answer),
            min(answer),
            median(answer) / base,
            "",
            "",
        ],
        [
            "resume: launch to the review panel",
            median(panel),
            min(panel),
            median(panel) / base,
            f"{PANEL_GOAL_MS:.0f} ms",
            verdict(median(panel), PANEL_GOAL_MS),
        ],
        [
            "resume: CPU used by the time the panel shows",
            median(panel_cpu),
            min(panel_cpu),
            "",  # CPU time: not comparable with --help's wall time
            "",
            "",
        ],
        [f"`agentcli run {MESSAGE}` (whole command)", median(run), min(run), median(run) / base],
    ]
    rows[-1] += ["", ""]
    return table(["measure", "median ms", "min ms", "x --help", "goal", "met"], rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one round of each, no warm-up")
    parser.add_argument("--rounds", type=int, default=20, help="rounds of the short commands")
    parser.add_argument("--chats", type=int, default=15, help="terminal rounds (chat, resume...)")
    args = parser.parse_args()
    rounds, chats = (1, 1) if args.quick else (args.rounds, args.chats)
    print(f"{machine()}; whole commands timed with {timer_name()}; agentcli: {AGENTCLI}\n")
    with tempfile.TemporaryDirectory(prefix="agentcli-bench-") as tmp, ScriptedServer() as server:
        home = Path(tmp)
        thread = park(cli_env(home, server.base_url), home, server)
        print(f"Short commands ({rounds} interleaved rounds):\n")
        print(short_commands(rounds, not args.quick, home, thread))
        print(
            f"\nIn a terminal, against the scripted server ({chats} rounds, each: --help, a chat,"
            " a resume to a review, a run):\n"
        )
        print(terminal(chats, not args.quick, home, server, thread))


if __name__ == "__main__":
    main()
