"""Waiting on a condition instead of for a fixed time: a test that sleeps "long enough" fails
on a busy machine (the suite runs eight workers on two cores) and wastes time on an idle one.

`until` polls a predicate until it holds; its deadline is generous on purpose (it is only
reached when something is wrong, and then the message says what never happened). A process
the condition depends on can be named: if it exits first, the wait fails at once, with its
exit status, instead of at the deadline.

`ends` is for a call that must give up by itself (a time limit, a budget) on work that would
otherwise run for hours: it fails when the call has not returned by the deadline, instead of
asserting how long it took, which a busy machine makes false."""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pexpect

T = TypeVar("T")

# what a wait allows before it fails: far above what any condition takes on an idle machine
# (a few seconds at most), so that a machine many times slower still passes: at load 28 on 2
# cores one agentcli command took over 60 s. Below the 300 s that the commands a test must
# see stopped run for (tests/security/test_process_lifetime.py, hang(300))
WAIT_S = 120.0
POLL_S = 0.02


class NeverHappened(AssertionError):
    """A condition a test waited on did not hold in time."""


def until(
    predicate: Callable[[], T],
    *,
    what: str,
    timeout: float = WAIT_S,
    process: subprocess.Popen[Any] | pexpect.spawn | None = None,
) -> T:
    """Poll `predicate` until it returns something true, and return that. `what` names the
    condition for the failure message; `process`, if given, must stay alive meanwhile."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if process is not None and not _alive(process):
            raise NeverHappened(f"{what}: never, the process exited first ({_status(process)})")
        if time.monotonic() > deadline:
            raise NeverHappened(f"{what}: not within {timeout:g} s")
        time.sleep(POLL_S)


def ends(call: Callable[[], T], *, what: str, timeout: float = WAIT_S) -> T:
    """`call()`'s result (or its exception), once it returns; NeverHappened if it is still
    running at the deadline (it is then left to run in a daemon thread)."""
    outcome: list[tuple[bool, Any]] = []

    def run() -> None:
        try:
            outcome.append((True, call()))
        except BaseException as exc:  # noqa: BLE001 - raised again in the test's thread
            outcome.append((False, exc))

    threading.Thread(target=run, daemon=True).start()
    until(lambda: outcome, what=what, timeout=timeout)
    returned, value = outcome[0]
    if not returned:
        raise value
    return value  # type: ignore[no-any-return]


def file_holds(path: Any, text: str) -> Callable[[], bool]:
    """A predicate: the file at `path` exists and contains `text`."""

    def holds() -> bool:
        try:
            return text in path.read_text()
        except FileNotFoundError:
            return False

    return holds


def _alive(process: subprocess.Popen[Any] | pexpect.spawn) -> bool:
    if isinstance(process, pexpect.spawn):
        return bool(process.isalive())
    return process.poll() is None


def _status(process: subprocess.Popen[Any] | pexpect.spawn) -> str:
    if isinstance(process, pexpect.spawn):
        return f"status {process.exitstatus}, signal {process.signalstatus}"
    return f"status {process.returncode}"


def running(pid: int) -> bool:
    """Whether process `pid` is running: it exists and is not a zombie (which answers signal 0
    until its parent reaps it). One read of /proc/PID/stat, so a process that ends meanwhile
    reads as not running rather than failing the read."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")
