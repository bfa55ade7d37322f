"""What the tests' warm start (tests/helpers/warm_run.py) saves: the CPU of one command,
started cold (`subprocess.run` of the installed agentcli) and warm, side by side, against the
scripted model server.

    .venv/bin/python bench/warm_start.py [--rounds N]

Cold CPU is the child's (getrusage RUSAGE_CHILDREN); warm CPU is what the warm-start server
reports for the command it forked (os.wait4). Medians over N alternating rounds.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.helpers import warm_run  # noqa: E402
from tests.helpers.environment import isolated_env  # noqa: E402
from tests.helpers.scripted_server import ScriptedServer, text, tool_calls  # noqa: E402

AGENTCLI = str(Path(sys.executable).parent / "agentcli")
COMMANDS = {
    "--help": ["--help"],
    "threads list": ["threads", "list"],
    "run (one answer)": ["run", "hi"],
    "run -y (a read, then the answer)": ["run", "-y", "read a.txt"],
}


def cold(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, env=env, cwd=cwd, capture_output=True, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def warm(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    before = warm_run.cpu_used
    done = warm_run.warm_run(argv, env=env, cwd=cwd, stdin="", timeout=300)
    assert done.returncode == 0, done.stderr
    return warm_run.cpu_used - before


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    rounds = parser.parse_args().rounds
    folder = Path(tempfile.mkdtemp())
    (folder / "work").mkdir()
    (folder / "work" / "a.txt").write_text("a\n")
    times: dict[tuple[str, str], list[float]] = {}
    with ScriptedServer() as server:
        env = isolated_env(
            folder / "home",
            OPENAI_BASE_URL=server.base_url,
            AGENTCLI_MODEL="scripted",
            OPENAI_API_KEY="k",
        )
        for _ in range(rounds):
            for name, args in COMMANDS.items():
                for how, start in (("cold", cold), ("warm", warm)):
                    if args[0] == "run":
                        replies = [text("hello")]
                        if "-y" in args:
                            replies.insert(0, tool_calls(("read_file", {"path": "a.txt"})))
                        server.push(*replies)
                    spent = start([AGENTCLI, *args], env, folder / "work")
                    times.setdefault((name, how), []).append(spent)
    print(f"load average {os.getloadavg()[0]:.1f}; CPU s, median of {rounds}")
    print("| command | cold | warm | warm/cold |\n|---|--:|--:|--:|")
    for name in COMMANDS:
        c, w = (statistics.median(times[(name, how)]) for how in ("cold", "warm"))
        print(f"| {name} | {c:.2f} | {w:.2f} | {w / c:.2f} |")


if __name__ == "__main__":
    main()
