"""A process and everything below it, read from /proc: its children and descendants, when it
started (to tell a reused pid), and ending a whole tree that an earlier agentcli process left
running.

Quick to import, like tools/confine.py: tools/supervise.py loads this file by its path into
a supervisor started with ``python -S -I``, so it imports nothing the supervisor does not
(not even `signal`, whose wrapper imports enum: `_signal` is the C module)."""

from __future__ import annotations

import _signal as signal
import os
import time


def start_time(pid: int) -> str | None:
    """When process ``pid`` started (field 22 of /proc/<pid>/stat), None if it is gone."""
    stat = _stat(pid)
    return None if stat is None else stat[19]


def children(pid: int) -> list[int]:
    """The live children of ``pid``, read from /proc/PID/task/TID/children."""
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as file:
                found += [int(c) for c in file.read().split()]
        except (OSError, ValueError):
            continue
    return found


def descendants(root: int) -> list[int]:
    """Every live process below ``root``."""
    found: list[int] = []
    todo = [root]
    while todo:
        below = children(todo.pop())
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
        while new := {pid, *descendants(pid)} - seen:  # until the frozen tree stops growing
            for each in new:
                _signal(each, signal.SIGSTOP)
            seen |= new
        for each in seen:
            _signal(each, signal.SIGKILL)
    except PermissionError:
        return False
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        if all(_dead(each) for each in seen):
            return True
        time.sleep(0.02)
    return False


def _signal(pid: int, signum: int) -> None:
    try:
        os.kill(pid, signum)
    except ProcessLookupError:
        pass


def _stat(pid: int) -> list[str] | None:
    """/proc/<pid>/stat's fields after the command's name (the state first), None if gone."""
    try:
        with open(f"/proc/{pid}/stat") as file:
            return file.read().rsplit(")", 1)[1].split()
    except OSError:
        return None


def _dead(pid: int) -> bool:
    stat = _stat(pid)
    return stat is None or stat[0] in ("Z", "X")
