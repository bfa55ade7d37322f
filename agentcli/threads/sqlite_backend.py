"""The SQLite backend (the default): one file, LangGraph's SqliteSaver on a connection of
its own, and a lock row per thread in use."""

from __future__ import annotations

import os
import socket
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from agentcli.errors import AgentcliError, UsageError
from agentcli.thread_rows import now
from agentcli.threads.locks import Holder, running, start_time
from agentcli.threads.store import Store

if TYPE_CHECKING:
    from langgraph.checkpoint.sqlite import SqliteSaver

BUSY_TIMEOUT_S = 10.0


class SqliteStore(Store):
    OWN_MIGRATIONS: ClassVar[list[tuple[str, str]]] = [
        (
            "sqlite_001_locks",  # the thread each live session drives: see _try_lock
            """CREATE TABLE agentcli_locks (
                thread_id TEXT PRIMARY KEY,
                pid INTEGER NOT NULL,
                host TEXT NOT NULL,
                started TEXT,
                since TEXT NOT NULL
            );""",
        ),
    ]
    SAVER: ClassVar[str] = "sqlite"
    ERRORS = (sqlite3.Error,)

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path
        self.location = str(path)
        self._saver_conn: sqlite3.Connection | None = None
        self._serial = threading.RLock()  # one statement or transaction at a time: _execute
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fresh = not path.exists()
            self.conn = _connect(path, autocommit=True)
            if fresh:
                os.chmod(path, 0o600)
            self._migrate()
        except sqlite3.Error as exc:
            raise AgentcliError(f"cannot open the thread database {path}: {exc}") from None
        except OSError as exc:
            raise UsageError(f"cannot create the thread database {path}: {exc}") from None

    def _execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        """Run one statement to its end. Tool tasks write the call journal from threads of
        their own on this one connection: a statement left open (a fetchone) would hold a
        read snapshot, and another thread's write through it, once the checkpointer has
        committed, fails at once with "database is locked" (no busy wait can help)."""
        with self._serial:
            cursor = self.conn.execute(sql, params)
            return _Done(cursor.fetchall(), cursor.rowcount)

    @contextmanager
    def _transaction(self, rollback: bool = False) -> Iterator[None]:
        with self._serial:  # other threads' statements wait: they are not part of it
            self.conn.execute("BEGIN IMMEDIATE")  # a writer from the start: no upgrade
            try:
                yield
            except BaseException:
                self.conn.rollback()
                raise
            if rollback:
                self.conn.rollback()
            else:
                self.conn.commit()

    def _new_saver(self) -> SqliteSaver:
        from langgraph.checkpoint.sqlite import SqliteSaver

        from agentcli.threads.langgraph_internals import Recall, checkpoint_serializer

        class Saver(Recall, SqliteSaver):
            pass

        self._saver_conn = _connect(self.path)
        saver = Saver(self._saver_conn, serde=checkpoint_serializer())
        saver.setup()
        return saver

    def _columns(self, table: str) -> list[str]:
        return [row[1] for row in self._execute(f"PRAGMA table_info({table})").fetchall()]

    def _try_lock(self, thread_id: str) -> str | None:
        """A row naming this process; a row whose process is gone from this host is cleared.

        A holder on another host cannot be checked: its row stays until it lets go.
        """
        pid, host, started = os.getpid(), socket.gethostname(), start_time(os.getpid())
        for _ in range(3):
            inserted = self._execute(
                "INSERT OR IGNORE INTO agentcli_locks VALUES (?, ?, ?, ?, ?)",
                (thread_id, pid, host, started, now()),
            ).rowcount
            if inserted:
                return None
            row = self._execute(
                "SELECT pid, host, started, since FROM agentcli_locks WHERE thread_id = ?",
                (thread_id,),
            ).fetchone()
            if row is None:  # let go meanwhile
                continue
            if row[1] != host or running(row[0], row[2]):
                return f"pid {row[0]} on {row[1]} since {row[3][:19].replace('T', ' ')} UTC"
            self._execute(  # stale: that process is gone
                "DELETE FROM agentcli_locks WHERE thread_id = ? AND pid = ? AND host = ?"
                " AND since = ?",
                (thread_id, *row[:2], row[3]),
            )
        return "another process"

    def _holder(self, thread_id: str) -> Holder | None:
        row = self._execute(
            "SELECT pid, host, started FROM agentcli_locks WHERE thread_id = ?", (thread_id,)
        ).fetchone()
        return None if row is None else Holder(int(row[0]), str(row[1]), row[2])

    def _unlock(self, thread_id: str) -> None:
        self._execute(
            "DELETE FROM agentcli_locks WHERE thread_id = ? AND pid = ? AND host = ?",
            (thread_id, os.getpid(), socket.gethostname()),
        )

    def _close(self) -> None:
        self.conn.close()
        if self._saver_conn is not None:
            self._saver_conn.close()


class _Done:
    """A statement's rows, all fetched, and its row count: what callers read of a cursor."""

    def __init__(self, rows: list[Any], rowcount: int) -> None:
        self.rows, self.rowcount = rows, rowcount

    def fetchone(self) -> Any:
        return self.rows[0] if self.rows else None

    def fetchall(self) -> list[Any]:
        return self.rows

    def __iter__(self) -> Iterator[Any]:
        return iter(self.rows)


def _connect(path: Path, autocommit: bool = False) -> sqlite3.Connection:
    """WAL and a busy timeout, so readers never block and writers wait their turn."""
    conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, check_same_thread=False)
    if autocommit:  # statements commit at once; _transaction opens the longer ones
        conn.isolation_level = None
    _use_wal(conn)
    return conn


def _use_wal(conn: sqlite3.Connection) -> None:
    """Switch to WAL, waiting for other connections as the busy timeout would. The switch
    (once per database: it is kept in the file) upgrades the pragma's read lock to a write
    lock, and SQLite never waits on an upgrade, since two could wait on each other: of the
    processes opening a new database together, all but one would fail at once with
    "database is locked". Once one has switched, the pragma changes nothing and takes no
    write lock."""
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    pause = 0.001
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            busy = exc.sqlite_errorcode & 0xFF == sqlite3.SQLITE_BUSY
            if not busy or time.monotonic() + pause > deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.05)
