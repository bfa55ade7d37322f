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
    (
        "002_text",  # what people wrote and read, for search, kept apart from checkpoints
        """CREATE TABLE agentcli_text (
            thread_id TEXT NOT NULL,
            turn INTEGER NOT NULL,
            role TEXT NOT NULL,
            text TEXT NOT NULL
        );
        CREATE INDEX agentcli_text_thread ON agentcli_text(thread_id, turn);
        ALTER TABLE agentcli_threads ADD COLUMN turns INTEGER NOT NULL DEFAULT 0;""",
    ),
    (
        "003_usage",
        """ALTER TABLE agentcli_threads ADD COLUMN input_tokens INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE agentcli_threads ADD COLUMN output_tokens INTEGER NOT NULL DEFAULT 0;""",
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
    turns: int = 0  # user messages
    input_tokens: int = 0
    output_tokens: int = 0

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
        if not id_or_prefix.strip():
            raise ThreadNotFound("no thread id given")
        rows = self._select(
            "WHERE thread_id = ? OR thread_id LIKE ? ESCAPE '\\' ORDER BY thread_id LIMIT 6",
            id_or_prefix,
            _escape_like(id_or_prefix) + "%",
        )
        exact = [row for row in rows if row.thread_id == id_or_prefix]
        if exact or len(rows) == 1:
            return (exact or rows)[0]
        if not rows:
            raise ThreadNotFound(f"no thread '{id_or_prefix}' (agentcli threads list shows them)")
        names = ", ".join(row.thread_id for row in rows[:5])
        raise ThreadNotFound(f"thread id '{id_or_prefix}' is ambiguous: {names}")

    def recent(
        self,
        limit: int | None = None,
        *,
        status: str | None = None,
        search: str | None = None,
        workspace: str | None = None,
    ) -> list[ThreadRow]:
        """Threads newest first, optionally filtered; `search` looks at titles and messages."""
        where, params = ["1"], []
        if status:
            where.append("status = ?")
            params.append(status)
        if workspace:
            where.append("workspace = ?")
            params.append(workspace)
        if search:
            pattern = "%" + _escape_like(search) + "%"
            where.append(
                "(title LIKE ? ESCAPE '\\' OR thread_id IN (SELECT thread_id FROM agentcli_text"
                " WHERE text LIKE ? ESCAPE '\\'))"
            )
            params += [pattern, pattern]
        return self._select(
            f"WHERE {' AND '.join(where)} ORDER BY updated_at DESC, rowid DESC LIMIT ?",
            *params,
            -1 if limit is None else limit,
        )

    def add_text(self, thread_id: str, turn: int, role: str, text: str) -> None:
        with self.conn:
            self.conn.execute(
                "INSERT INTO agentcli_text VALUES (?, ?, ?, ?)", (thread_id, turn, role, text)
            )

    def add_usage(self, thread_id: str, usage: dict[str, int]) -> None:
        with self.conn:
            self.conn.execute(
                "UPDATE agentcli_threads SET input_tokens = input_tokens + ?,"
                " output_tokens = output_tokens + ? WHERE thread_id = ?",
                (usage.get("input_tokens", 0), usage.get("output_tokens", 0), thread_id),
            )

    def rename(self, thread_id: str, title: str) -> None:
        self.update(thread_id, title=title)

    def delete(self, thread_id: str) -> None:
        """The thread's checkpoints, writes, text and index row."""
        self.saver.delete_thread(thread_id)
        with self.conn:
            self.conn.execute("DELETE FROM agentcli_text WHERE thread_id = ?", (thread_id,))
            self.conn.execute("DELETE FROM agentcli_threads WHERE thread_id = ?", (thread_id,))

    def copy(self, source: ThreadRow, target: str, upto: str | None, turns: int) -> ThreadRow:
        """A new thread with the source's checkpoints up to `upto` (all if None) and the
        text of its first `turns` user turns.

        Every ancestor checkpoint and its writes are copied, so channels that are rebuilt
        from history (DeltaChannel) rebuild the same. LangGraph's SqliteSaver has no
        copy_thread, so this copies rows of its two tables.
        """
        with self.saver.conn as conn:
            # the fork point and its ancestors, by parent links (not by id order)
            conn.execute("CREATE TEMP TABLE IF NOT EXISTS agentcli_chain (id TEXT PRIMARY KEY)")
            conn.execute("DELETE FROM agentcli_chain")
            conn.execute(
                "WITH RECURSIVE chain(id) AS (SELECT ? UNION SELECT c.parent_checkpoint_id"
                " FROM checkpoints c JOIN chain ON c.checkpoint_id = chain.id"
                " WHERE c.thread_id = ? AND c.checkpoint_ns = '' AND c.parent_checkpoint_id"
                " IS NOT NULL) INSERT INTO agentcli_chain SELECT id FROM chain",
                (upto, source.thread_id),
            )
            keep = "" if upto is None else " AND checkpoint_id IN (SELECT id FROM agentcli_chain)"
            for table in ("checkpoints", "writes"):
                columns = [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]
                rest = ", ".join(c for c in columns if c != "thread_id")
                conn.execute(
                    f"INSERT INTO {table} (thread_id, {rest}) SELECT ?, {rest} FROM {table}"
                    " WHERE thread_id = ?" + keep,
                    (target, source.thread_id),
                )
        row = self.create(target, source.title, source.workspace, source.model)
        with self.conn:
            self.conn.execute(
                "INSERT INTO agentcli_text SELECT ?, turn, role, text FROM agentcli_text"
                " WHERE thread_id = ? AND turn <= ?",
                (target, source.thread_id, turns),
            )
        self.update(target, turns=turns, status=source.status if upto is None else "idle")
        row.turns = turns
        return row

    def _select(self, where: str, *params: Any) -> list[ThreadRow]:
        cursor = self.conn.execute(
            "SELECT thread_id, title, status, created_at, updated_at, workspace, model, messages,"
            f" last_error, turns, input_tokens, output_tokens FROM agentcli_threads {where}",
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
