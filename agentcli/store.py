"""Where threads live: LangGraph's SqliteSaver plus a small index of our own.

The index (one row per thread) lets `threads list` and id lookups run without
deserialising any checkpoint. Its schema changes only through named, append-only
migrations.
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentcli.errors import AgentcliError, ThreadNotFound, UsageError

if TYPE_CHECKING:
    from langgraph.checkpoint.sqlite import SqliteSaver

BUSY_TIMEOUT_S = 10.0

MIGRATIONS: list[tuple[str, str]] = [
    (
        "001_threads",
        """CREATE TABLE agentcli_threads (
            thread_id TEXT PRIMARY KEY,
            title TEXT NOT NULL,
            status TEXT NOT NULL DEFAULT 'idle',
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            workspace TEXT NOT NULL,
            model TEXT NOT NULL,
            messages INTEGER NOT NULL DEFAULT 0,
            last_error TEXT
        );
        CREATE INDEX agentcli_threads_updated ON agentcli_threads(updated_at);""",
    ),
]


@dataclass
class ThreadRow:
    thread_id: str
    title: str
    status: str  # idle | awaiting_approval | error
    created_at: str
    updated_at: str
    workspace: str
    model: str
    messages: int = 0
    last_error: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class Store:
    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fresh = not path.exists()
            self.conn = _connect(path)
            if fresh:
                os.chmod(path, 0o600)
            self._migrate()
        except sqlite3.Error as exc:
            raise AgentcliError(f"cannot open the thread database {path}: {exc}") from None
        except OSError as exc:
            raise UsageError(f"cannot create the thread database {path}: {exc}") from None
        self._saver: SqliteSaver | None = None

    @property
    def saver(self) -> SqliteSaver:
        if self._saver is None:
            from langgraph.checkpoint.sqlite import SqliteSaver

            self._saver = SqliteSaver(_connect(self.path))
        return self._saver

    def values(self, thread_id: str) -> dict[str, Any]:
        """The thread's latest saved state (messages, audit, ...), read without a graph."""
        saved = self.saver.get_tuple(
            {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
        )
        return dict(saved.checkpoint["channel_values"]) if saved else {}

    def _migrate(self) -> None:
        with self.conn:
            self.conn.execute(
                "CREATE TABLE IF NOT EXISTS agentcli_migrations"
                " (name TEXT PRIMARY KEY, applied_at TEXT)"
            )
        done = {row[0] for row in self.conn.execute("SELECT name FROM agentcli_migrations")}
        for name, sql in MIGRATIONS:
            if name not in done:
                record = f"INSERT INTO agentcli_migrations VALUES ('{name}', '{now()}')"
                self.conn.executescript(f"BEGIN; {sql}; {record}; COMMIT;")

    def create(self, thread_id: str, title: str, workspace: str, model: str) -> ThreadRow:
        stamp = now()
        row = ThreadRow(thread_id, title, "idle", stamp, stamp, workspace, model)
        with self.conn:
            self.conn.execute(
                "INSERT INTO agentcli_threads (thread_id, title, status, created_at, updated_at,"
                " workspace, model) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (thread_id, title, row.status, stamp, stamp, workspace, model),
            )
        return row

    def update(self, thread_id: str, **fields: Any) -> None:
        fields["updated_at"] = now()
        assignments = ", ".join(f"{name} = ?" for name in fields)
        with self.conn:
            self.conn.execute(
                f"UPDATE agentcli_threads SET {assignments} WHERE thread_id = ?",
                (*fields.values(), thread_id),
            )

    def resolve(self, id_or_prefix: str) -> ThreadRow:
        """The thread with this id, or the only one whose id starts with it."""
        rows = self._select(
            "WHERE thread_id = ? OR thread_id LIKE ? ESCAPE '\\' ORDER BY thread_id LIMIT 6",
            id_or_prefix,
            _escape_like(id_or_prefix) + "%",
        )
        exact = [row for row in rows if row.thread_id == id_or_prefix]
        if exact or len(rows) == 1:
            return (exact or rows)[0]
        if not rows or not id_or_prefix:
            raise ThreadNotFound(f"no thread '{id_or_prefix}' (agentcli threads list shows them)")
        names = ", ".join(row.thread_id for row in rows[:5])
        raise ThreadNotFound(f"thread id '{id_or_prefix}' is ambiguous: {names}")

    def recent(self, limit: int | None = None) -> list[ThreadRow]:
        return self._select(
            "ORDER BY updated_at DESC, rowid DESC LIMIT ?", -1 if limit is None else limit
        )

    def _select(self, where: str, *params: Any) -> list[ThreadRow]:
        cursor = self.conn.execute(
            "SELECT thread_id, title, status, created_at, updated_at, workspace, model, messages,"
            f" last_error FROM agentcli_threads {where}",
            params,
        )
        return [ThreadRow(*row) for row in cursor]

    def close(self) -> None:
        self.conn.close()
        if self._saver is not None:
            self._saver.conn.close()


def _connect(path: Path) -> sqlite3.Connection:
    """WAL and a busy timeout, so readers never block and writers wait their turn."""
    conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    return conn


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
