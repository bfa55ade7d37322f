"""One-shot `agentcli run hi` against a local scripted model server (issue 8, goal 3).

Each round runs, one after another and once each (hyperfine when installed):

- `agentcli run hi`: the installed command, a private home, the scripted server
  (tests/helpers/scripted_server.py) answering one streamed text reply;
- bench/minimal.py: the least a script can do with the same libraries (import langgraph and
  langchain_openai, a one-node StateGraph compiled with a SqliteSaver, one streamed
  ChatOpenAI call). Goal: `agentcli run` takes at most 1.10 times as long;
- bench/minimal.py --gc: the same with the garbage collector handled as agentcli handles it
  (off while importing, frozen at exit): how much of the lead is that alone;
- `llm -m scripted hi`: Simon Willison's llm (PyPI `llm`) with an `extra-openai-models.yaml`
  in its user dir (LLM_USER_PATH) whose `api_base` is the same server. It lives in a venv of
  its own, bench/.cache/llm-venv, never in the project's; without --quick the script creates
  it (`pip install llm`) when missing. --quick only uses an llm already there, --no-llm skips
  it, --llm PATH uses another llm executable.

Every command writes its conversation to SQLite (agentcli and minimal.py a new thread each,
llm its logs.db). Medians over the rounds, after one warm-up round.

    .venv/bin/python bench/run.py            # 20 rounds
    .venv/bin/python bench/run.py --quick    # one round, no warm-up: keeps the script working
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import (
    AGENTCLI,
    ANSWER,
    ROOT,
    cli_env,
    interleaved,
    machine,
    median,
    table,
    timer_name,
    verdict,
)

from tests.helpers.scripted_server import ScriptedServer, text

MESSAGE = "hi"
GOAL_RATIO = 1.10
LLM_VENV = ROOT / "bench" / ".cache" / "llm-venv"
MINIMAL = str(ROOT / "bench" / "minimal.py")


def find_llm(args: argparse.Namespace) -> tuple[str | None, str]:
    """The llm executable to time (None: skip the row), and what to say about it."""
    if args.no_llm:
        return None, "llm: skipped (--no-llm)"
    exe = Path(args.llm) if args.llm else LLM_VENV / "bin" / "llm"
    if not exe.exists() and not args.llm and not args.quick:
        print(f"installing llm into {LLM_VENV} ...", file=sys.stderr)
        try:
            subprocess.run([sys.executable, "-m", "venv", str(LLM_VENV)], check=True)
            pip = [str(LLM_VENV / "bin" / "python"), "-m", "pip", "install", "-q", "llm"]
            subprocess.run(pip, check=True, timeout=900, stdout=subprocess.DEVNULL)
        except (OSError, subprocess.SubprocessError) as exc:
            return None, f"llm: could not be installed ({exc}): row skipped"
    if not exe.exists():
        return None, f"llm: not installed ({exe}): row skipped"
    version = subprocess.run([str(exe), "--version"], capture_output=True, text=True).stdout
    return str(exe), f"{version.strip()} ({exe})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one round, no warm-up")
    parser.add_argument("--rounds", type=int, default=20, help="interleaved rounds")
    parser.add_argument("--no-llm", action="store_true", help="leave llm out")
    parser.add_argument("--llm", metavar="PATH", help="the llm executable to time")
    args = parser.parse_args()
    rounds = 1 if args.quick else args.rounds
    llm, llm_note = find_llm(args)
    with tempfile.TemporaryDirectory(prefix="agentcli-bench-") as tmp, ScriptedServer() as server:
        home = Path(tmp)
        env = cli_env(home, server.base_url)
        commands = {
            f"`agentcli run {MESSAGE}`": [AGENTCLI, "run", MESSAGE],
            "bench/minimal.py": [
                sys.executable,
                MINIMAL,
                server.base_url,
                str(home / "m.db"),
                MESSAGE,
            ],
            "bench/minimal.py --gc": [
                sys.executable,
                MINIMAL,
                server.base_url,
                str(home / "g.db"),
                MESSAGE,
                "--gc",
            ],
        }
        if llm:
            user = home / "llm"
            user.mkdir()
            (user / "extra-openai-models.yaml").write_text(
                f'- model_id: scripted\n  model_name: scripted\n  api_base: "{server.base_url}"\n'
            )
            env["LLM_USER_PATH"] = str(user)
            commands[f"`llm -m scripted {MESSAGE}`"] = [llm, "-m", "scripted", MESSAGE]

        def queue() -> None:
            server.push(*[text(ANSWER) for _ in commands])

        times = interleaved(commands, rounds, env, home, warmup=not args.quick, before=queue)
        served = len(commands) * (rounds + (not args.quick))
        assert len(server.requests) == served and not server.pending, "a command made no call"
        names = list(commands)
        unstreamed = {
            names[i % len(names)] for i, r in enumerate(server.requests) if not r.get("stream")
        }
    ours = median(times[next(iter(commands))])
    rows = []
    for name, ms in times.items():
        goal = GOAL_RATIO if name == "bench/minimal.py" else None
        ratio = ours / median(ms)
        rows.append([name, median(ms), min(ms), ratio, goal, verdict(ratio, goal) if goal else ""])
    print(f"{machine()}; timed with {timer_name()}; {rounds} interleaved rounds")
    print(f"agentcli: {AGENTCLI}; {llm_note}")
    for name in sorted(unstreamed):
        print(f"note: {name} did not stream its request")
    print()
    print(table(["command", "median ms", "min ms", "agentcli run / this", "goal", "met"], rows))


if __name__ == "__main__":
    main()
