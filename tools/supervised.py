"""Supervised: a tool command started under tools/supervise.py, so it dies with its caller.

The supervisor is a child subreaper: whatever the command leaves behind (background jobs,
``setsid -f``, ``nohup ... &``, double forks) stays in its tree and is killed when the
command ends. It holds one end of a socket whose other end only this process holds; when
this process exits, however it exits (SIGKILL too), the supervisor sees EOF and kills the
whole tree. ``stop_all()`` is for the application's SIGTERM/SIGHUP handlers.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

SUPERVISE = str(Path(__file__).with_name("supervise.py"))
CLOSE_WAIT = 2.0  # seconds for a supervisor to clean up once its lifeline is closed

_running: set[Supervised] = set()
_lock = threading.Lock()
_stopping = threading.Event()  # set by stop_all: the application is exiting


class Stopped(BaseException):
    """The application is exiting and stopped this command: what it printed is no result
    (a BaseException, so that no tool node turns it into one and the call stays unfinished,
    to be offered again for review when the thread resumes)."""


class Supervised:
    """One command under its supervisor. ``process`` is the supervisor's Popen: its exit
    code is the command's (-N if a signal N ended it)."""

    def __init__(self, argv: list[str], *, grace: float, **popen: Any) -> None:
        mine, theirs = socket.socketpair()
        self._lifeline = mine
        try:
            self.process: subprocess.Popen[bytes] = subprocess.Popen(
                [sys.executable, "-S", "-I", SUPERVISE, str(theirs.fileno()), f"{grace:g}"]
                + ["--", *argv],
                pass_fds=(theirs.fileno(),),
                start_new_session=True,
                **popen,
            )
        except BaseException:
            mine.close()
            raise
        finally:
            theirs.close()
        with _lock:
            _running.add(self)

    @property
    def pid(self) -> int:
        return self.process.pid

    def stop(self) -> None:
        """Ask the supervisor to end the command and everything it started (SIGTERM, then
        SIGKILL after the grace period)."""
        with contextlib.suppress(ProcessLookupError):
            self.process.send_signal(signal.SIGTERM)

    def check_stopped(self) -> None:
        """Raise Stopped if the application stopped every command (stop_all)."""
        if _stopping.is_set():
            raise Stopped("the application is exiting: the command was stopped")

    def had_leftovers(self) -> bool:
        """True if, after the command ended, the supervisor had processes left to stop."""
        self._lifeline.setblocking(False)
        try:
            return self._lifeline.recv(1) == b"L"
        except OSError:
            return False

    def close(self) -> None:
        """Make sure nothing is left: the lifeline closes (the supervisor, if still there,
        kills its tree at once and exits), then the supervisor's process group gets SIGKILL
        (for a command that killed its own supervisor), and the supervisor is reaped."""
        with _lock:
            _running.discard(self)
        self._lifeline.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=CLOSE_WAIT)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()


def stop_all(wait: float = 1.0) -> None:
    """Close every running command's lifeline, so each supervisor kills its tree, and wait
    up to ``wait`` seconds for them to be done: for signal handlers before exiting."""
    _stopping.set()
    with _lock:
        running = list(_running)
    for item in running:
        with contextlib.suppress(OSError):
            item._lifeline.shutdown(socket.SHUT_RDWR)
    deadline = time.monotonic() + wait
    for item in running:
        with contextlib.suppress(subprocess.TimeoutExpired):
            item.process.wait(timeout=max(deadline - time.monotonic(), 0))
