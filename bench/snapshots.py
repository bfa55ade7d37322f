"""What undo's snapshots cost a call (issue 18, item 5).

A workspace of 10,000 files (100 folders of 100 files of about 300 bytes, plus a
.gitignore'd folder of 2,000 more that are never read), snapshotted as the tools node does
(agentcli.undo): the first snapshot (every file hashed once), then, interleaved in
each round:

- one snapshot after one file changed (git's index: the other files are only stat'ed);
- one snapshot when nothing changed;
- a write_file call's bracket: snapshot, a check that its path is not ignored, change one
  file, snapshot and the record's commit (what undo adds to a write_file);
- a shell call's bracket: the same, but listing the workspace's ignored files and folders
  instead (a shell call may change any file; undo names those it cannot restore).

Goal: a snapshot of the 10,000-file workspace when little changed takes at most 150 ms
(median).

    .venv/bin/python bench/snapshots.py            # 30 interleaved rounds
    .venv/bin/python bench/snapshots.py --quick    # 3 rounds, 2,000 files: keeps it working
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from _common import machine, median, table, verdict

from agentcli.undo.call_snapshots import WorkspaceSnapshots

GOAL_MS = 150.0


def workspace(root: Path, folders: int) -> Path:
    work = root / "work"
    for folder in range(folders):
        (work / f"dir{folder}").mkdir(parents=True)
        for index in range(100):
            text = f"file {folder}/{index}\n" + "x" * 280 + "\n"
            (work / f"dir{folder}" / f"f{index}.txt").write_text(text)
    (work / ".gitignore").write_text("build/\n")
    (work / "build").mkdir()
    for index in range(folders * 20):
        (work / "build" / f"o{index}.o").write_bytes(b"\0" * 300)
    return work


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 rounds, 2,000 files")
    parser.add_argument("--rounds", type=int, default=30, help="interleaved rounds")
    args = parser.parse_args()
    rounds, folders = (3, 20) if args.quick else (args.rounds, 100)
    load = os.getloadavg()[0]
    print(f"{machine()}; load average {load:.1f}; {rounds} interleaved rounds;", end=" ")
    print(f"{folders * 100:,} files\n")
    with tempfile.TemporaryDirectory(prefix="agentcli-bench-") as tmp:
        work = workspace(Path(tmp), folders)
        snapshots = WorkspaceSnapshots(Path(tmp) / "snapshots")
        began = time.perf_counter()
        snapshots.now(work)
        first = (time.perf_counter() - began) * 1000
        times: dict[str, list[float]] = {
            "snapshot, one file changed": [],
            "snapshot, nothing changed": [],
            "a write_file call's bracket (before, after, record)": [],
            "a shell call's bracket (ignored files listed)": [],
        }
        target = work / "dir7" / "f7.txt"
        for round_ in range(rounds):
            target.write_text(f"changed {round_}\n")
            began = time.perf_counter()
            snapshots.now(work)
            times["snapshot, one file changed"].append((time.perf_counter() - began) * 1000)
            began = time.perf_counter()
            snapshots.now(work)
            times["snapshot, nothing changed"].append((time.perf_counter() - began) * 1000)
            began = time.perf_counter()
            path = str(target.relative_to(work))
            taken = snapshots.before(work, [path])  # the bracket the executor puts round a group
            target.write_text(f"written {round_}\n")
            snapshots.after("bench", work, taken, [(f"w{round_}", "write_file")], None)
            times["a write_file call's bracket (before, after, record)"].append(
                (time.perf_counter() - began) * 1000
            )
            began = time.perf_counter()
            taken = snapshots.before(work, None)
            target.write_text(f"shell {round_}\n")
            snapshots.after("bench", work, taken, [(f"s{round_}", "shell")], None)
            times["a shell call's bracket (ignored files listed)"].append(
                (time.perf_counter() - began) * 1000
            )
    rows: list[list[object]] = [["first snapshot (every file hashed)", first, first, None, ""]]
    for name, ms in times.items():
        goal = GOAL_MS if name.startswith("snapshot") else None
        rows.append([name, median(ms), min(ms), goal, verdict(median(ms), GOAL_MS) if goal else ""])
    print(table(["snapshot", "median ms", "min ms", "goal ms", "met"], rows))


if __name__ == "__main__":
    main()
