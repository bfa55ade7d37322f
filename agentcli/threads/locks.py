"""One session per thread: the part of a Store that takes, keeps and lets go of a thread.

A backend supplies the lock itself (`_try_lock`, `_unlock`): an advisory lock on PostgreSQL,
a row naming the holding process on SQLite.
"""

from __future__ import annotations

import atexit
from abc import ABC, abstractmethod
from collections.abc import Iterator
from contextlib import contextmanager
from typing import ClassVar

from agentcli.errors import ThreadBusy


class ThreadLocks(ABC):
    ERRORS: ClassVar[tuple[type[Exception], ...]] = ()  # the database driver's errors
    _held: str | None = None  # the thread this store's session drives

    @abstractmethod
    def _try_lock(self, thread_id: str) -> str | None:
        """Take the thread's lock: None, or who holds it."""

    @abstractmethod
    def _unlock(self, thread_id: str) -> None: ...

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
