"""What confinement adds to a shell command's start (issue 17, item 5).

`bash -c true` run as the shell tool runs it (tools.supervised.Supervised, the process's
long-lived supervisor), from the start until the output's EOF and the exit status, with
the sandbox plans of tools.sandbox, interleaved in each round (A B C ...):

- `--sandbox off`: no plan;
- workspace-write in a git workspace of 30 top-level entries: the call supervisor makes the
  command's namespaces (every mount read-only, the writable set and .git bound, a private
  /tmp and /dev), then Landlock, the capabilities and seccomp, before posix_spawn;
- workspace-write outside a repository;
- workspace-write with hosts listed: the egress proxy's socket bound in the command's network
  namespace, handed back and served (Landlock ABI 4);
- read-only;
- workspace-write under Landlock alone (where user namespaces are refused): it lists the
  30 entries and grants each but .git;
- workspace-write under bubblewrap (the fallback where Landlock is missing), if installed.

Goal: confinement adds at most 10 ms over `--sandbox off` (medians).

    .venv/bin/python bench/sandbox.py            # 60 interleaved rounds
    .venv/bin/python bench/sandbox.py --quick    # 3 rounds: keeps the script working
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import machine, median, table, verdict
from agentcli_tools import sandbox as sandboxes
from agentcli_tools.egress import Hosts
from agentcli_tools.egress_proxy import EgressProxy
from agentcli_tools.sandbox import Sandbox
from agentcli_tools.supervised import Supervised

COMMAND = ["bash", "-c", "true"]
GOAL_MS = 10.0  # over --sandbox off


def start(cwd: Path, env: dict[str, str], plan: dict[str, Any] | None) -> None:
    process = Supervised(COMMAND, grace=0.5, cwd=cwd, env=env, sandbox=plan)
    proxy = None
    if process.listener is not None:  # served as the shell tool serves it
        proxy = EgressProxy(process.listener, Hosts.parse(["pypi.org"])).start()
    process.stdout.read()
    process.stdout.close()
    assert process.wait() == 0
    process.close()
    if proxy is not None:
        proxy.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 rounds")
    parser.add_argument("--rounds", type=int, default=60, help="interleaved rounds")
    args = parser.parse_args()
    rounds = 3 if args.quick else args.rounds
    kind, abi, _ = sandboxes.mechanism()
    load = os.getloadavg()[0]
    print(f"{machine()}; load average {load:.1f}; {rounds} interleaved rounds;", end=" ")
    print(f"mechanism {kind or 'none'} {abi or ''}\n")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"}
    with tempfile.TemporaryDirectory(prefix="agentcli-bench-") as tmp:
        repo, plain = Path(tmp) / "repo", Path(tmp) / "plain"
        (repo / ".git" / "hooks").mkdir(parents=True)
        plain.mkdir()
        for index in range(15):
            (repo / f"dir{index}").mkdir()
            (repo / f"file{index}.txt").write_text("x")
        ways: dict[str, tuple[Path, dict[str, Any] | None]] = {"`--sandbox off`": (repo, None)}
        if kind == "landlock":
            ways["workspace-write, git workspace (30 entries)"] = (repo, Sandbox().plan(repo))
            ways["workspace-write, no repository"] = (plain, Sandbox().plan(plain))
            ways["read-only"] = (repo, Sandbox(mode="read-only").plan(repo))
            if abi >= 4:
                listed = Sandbox(hosts=("pypi.org",)).plan(repo, proxy=True)
                ways["workspace-write, hosts listed (egress proxy)"] = (repo, listed)
            alone = {**Sandbox().plan(repo), "namespaces": False}  # type: ignore[dict-item]
            ways["workspace-write, Landlock alone (no namespace)"] = (repo, alone)
        if bwrap := shutil.which("bwrap"):
            plan = {**Sandbox().plan(repo), "mechanism": "bwrap", "bwrap": bwrap}  # type: ignore[dict-item]
            ways["workspace-write, bubblewrap"] = (repo, plan)
        start(repo, env, None)  # warm-up: the supervisor starts, bash is in the page cache
        times: dict[str, list[float]] = {name: [] for name in ways}
        for _ in range(rounds):
            for name, (cwd, plan) in ways.items():
                began = time.perf_counter()
                start(cwd, env, plan)
                times[name].append((time.perf_counter() - began) * 1000)
    floor = median(times["`--sandbox off`"])
    rows: list[list[object]] = []
    for name, ms in times.items():
        over = median(ms) - floor
        landlock = name not in ("`--sandbox off`", "workspace-write, bubblewrap")
        goal = GOAL_MS if landlock else None
        rows.append([name, median(ms), min(ms), over, goal, verdict(over, GOAL_MS) if goal else ""])
    print(table(["command start", "median ms", "min ms", "over off ms", "goal ms", "met"], rows))


if __name__ == "__main__":
    main()
