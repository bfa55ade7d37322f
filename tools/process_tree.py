"""A process and everything below it, read from /proc: when it started (to tell a reused pid),
and ending a whole tree that an earlier agentcli process left running."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path


def start_time(pid: int) -> str | None:
    """When process ``pid`` started (field 22 of /proc/<pid>/stat), None if it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[19]


def _tree(root: int) -> list[int]:
    found, todo = [root], [root]
    while todo:
        pid = todo.pop()
        for task in Path(f"/proc/{pid}/task").glob("*"):
            with contextlib.suppress(OSError, ValueError):
                below = [int(c) for c in (task / "children").read_text().split()]
                found += below
                todo += below
    return found


def end_tree(pid: int, started: str, wait: float = 5.0) -> bool:
    """End a call supervisor an earlier process left running (its process ``pid`` if it
    started at ``started``), and everything below it: stopped first (SIGSTOP) so that no
    process forks away while the tree is read, then SIGKILL. True once none is left;
    False if it cannot be signalled (another user's) or outlives ``wait`` s."""
    if start_time(pid) != started:
        return True
    try:
        seen: set[int] = set()
        while new := set(_tree(pid)) - seen:  # until the frozen tree no longer grows
            for each in new:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(each, signal.SIGSTOP)
            seen |= new
        for each in seen:
            with contextlib.suppress(ProcessLookupError):
                os.kill(each, signal.SIGKILL)
    except PermissionError:
        return False
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        if all(_dead(each) for each in seen):
            return True
        time.sleep(0.02)
    return False


def _dead(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")
