"""One session per thread: the part of a Store that takes, keeps and lets go of a thread, and
stops the process that holds one (`threads delete --force`).

A backend supplies the lock itself (`_try_lock`, `_unlock`, `_holder`): an advisory lock on
PostgreSQL, a row naming the holding process on SQLite.
"""

from __future__ import annotations

import atexit
import os
import signal
import socket
import time
from abc import ABC, abstractmethod
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from agentcli.errors import ThreadBusy, UsageError

STOP_GRACE_S = 15.0  # after SIGTERM, how long a holder has to let go before SIGKILL
STOP_POLL_S = 0.05


@dataclass(frozen=True)
class Holder:
    """The process a thread's lock names: `pid` on `host`, started at clock tick `started`
    (field 22 of /proc/<pid>/stat; None where the backend does not record it)."""

    pid: int
    host: str
    started: str | None = None


class ThreadLocks(ABC):
    ERRORS: ClassVar[tuple[type[Exception], ...]] = ()  # the database driver's errors
    _held: str | None = None  # the thread this store's session drives

    @abstractmethod
    def _try_lock(self, thread_id: str) -> str | None:
        """Take the thread's lock: None, or who holds it."""

    @abstractmethod
    def _unlock(self, thread_id: str) -> None: ...

    @abstractmethod
    def _holder(self, thread_id: str) -> Holder | None:
        """The process the thread's lock names, if the backend can tell."""

    def hold(self, thread_id: str) -> None:
        """Take this thread for this store's session, refusing one another process is
        driving; let go of the thread held before. Released by `release` or `close`,
        or at exit (a crashed holder's lock is cleared by the backend)."""
        if self._held == thread_id:
            return
        self._lock(thread_id)
        self.release()
        self._held = thread_id
        atexit.register(self._release_at_exit)

    def release(self) -> None:
        if self._held is not None:
            held, self._held = self._held, None
            atexit.unregister(self._release_at_exit)
            self._unlock(held)

    def _release_at_exit(self) -> None:
        try:
            self.release()
        except self.ERRORS:  # the connection is gone, and the lock with it (or stale)
            pass

    def stop_holder(self, thread_id: str) -> None:
        """Stop the agentcli process of this user, on this host, that holds the thread, and
        wait until it has let go: SIGTERM first (it stops its commands, records the thread as
        interrupted and exits), SIGKILL after STOP_GRACE_S. A holder elsewhere, or a process
        the lock names that is not this user's agentcli, is refused (UsageError): the lock
        is data anyone who can write the store could have written."""
        for sig in (signal.SIGTERM, signal.SIGKILL):
            if self._free(thread_id):
                return
            holder = self._holder(thread_id)
            if holder is None:  # held, but the backend cannot say by whom
                raise UsageError(f"thread {thread_id} is held by an unknown process: stop it")
            _check_stoppable(thread_id, holder)
            try:
                os.kill(holder.pid, sig)
            except ProcessLookupError:
                pass
            deadline = time.monotonic() + STOP_GRACE_S
            while time.monotonic() < deadline:
                if self._free(thread_id):
                    return
                time.sleep(STOP_POLL_S)
        self._lock(thread_id)  # ThreadBusy, naming who still holds it

    def _free(self, thread_id: str) -> bool:
        """Whether no live process holds the thread (a crashed holder's lock is cleared)."""
        if self._try_lock(thread_id) is not None:
            return False
        self._unlock(thread_id)
        return True

    def _lock(self, thread_id: str) -> None:
        holder = self._try_lock(thread_id)
        if holder is not None:
            raise ThreadBusy(
                f"thread {thread_id} is in use by another agentcli process ({holder}): wait"
                f" for it to finish, or work on a copy (agentcli threads fork {thread_id})"
            )

    @contextmanager
    def _holding(self, thread_id: str) -> Iterator[None]:
        if self._held == thread_id:
            yield
            return
        self._lock(thread_id)
        try:
            yield
        finally:
            self._unlock(thread_id)


def _check_stoppable(thread_id: str, holder: Holder) -> None:
    """Refuse to signal anything but this user's agentcli process on this host that took
    the lock (the same start time, where the backend recorded it)."""
    where = f"pid {holder.pid} on {holder.host}"
    if holder.host != socket.gethostname():
        raise UsageError(f"thread {thread_id} is held by {where}: stop that process there")
    proc = Path(f"/proc/{holder.pid}")
    try:
        mine = proc.stat().st_uid == os.getuid()
        command = (proc / "cmdline").read_bytes().split(b"\0")
    except OSError:
        return  # gone meanwhile: the lock is stale, and the next look clears it
    agentcli = any(Path(os.fsdecode(part)).name == "agentcli" for part in command[:3])
    same = holder.started is None or start_time(holder.pid) == holder.started
    if holder.pid == os.getpid() or not (mine and agentcli and same):
        raise UsageError(
            f"thread {thread_id}: its lock names {where}, which is not an agentcli process"
            " of yours: nothing was stopped"
        )


def start_time(pid: int) -> str | None:
    """When the process started (Linux: clock ticks since boot), to tell a reused pid;
    "dead" for a zombie (killed, not yet reaped by its parent)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2 :].split()
    return "dead" if fields[0] in ("Z", "X") else fields[19]


def running(pid: int, started: str | None) -> bool:
    """Whether the process that took a lock still runs (the pid may have been reused)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: it exists
        pass
    now_started = start_time(pid)
    if now_started == "dead":
        return False
    return started is None or now_started is None or now_started == started
