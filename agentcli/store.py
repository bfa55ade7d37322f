"""Where threads live: a LangGraph checkpointer plus a small index of our own, in one database.

One `Store` interface, two backends: SQLite (sqlitestore.py, the default) and PostgreSQL
(pgstore.py, the `postgres` extra). The SQL they share is written once, here and in
schema.py, with `?` placeholders; a backend runs it and supplies what differs (connections,
transactions, the checkpointer's tables, the per-thread lock of threadlock.py).

The index (one row per thread) lets `threads list` and id lookups run without
deserialising any checkpoint. Its schema changes only through named, append-only
migrations (schema.py).
"""

from __future__ import annotations

import re
import uuid
from abc import abstractmethod
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, ClassVar

from agentcli.errors import AgentcliError, ConfigError, ThreadNotFound
from agentcli.journal import JournalTables
from agentcli.schema import CHAIN_SQL, MIGRATIONS, escape_like
from agentcli.threadlock import ThreadLocks

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver

    from agentcli.config import Settings


@dataclass
class ThreadRow:
    thread_id: str
    title: str
    status: str  # idle | running | awaiting_approval | error
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


_SURROGATE = re.compile("[\ud800-\udfff]")


def storable(text: str) -> str:
    """Text a database column can hold: a lone surrogate (a model's "\\ud800" escape, an
    undecodable byte in argv) becomes U+FFFD. The index and search text only: the
    checkpoints keep the messages exactly."""
    return _SURROGATE.sub("\ufffd", text)


def new_thread_id() -> str:
    return uuid.uuid4().hex[:12]


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class Store(ThreadLocks, JournalTables):
    """Threads, their index and their text; one session's lock on the thread it drives."""

    location: str  # for messages: the file, or the URL with its password masked
    LIKE: ClassVar[str] = "LIKE"  # SQLite's is case-insensitive: PostgreSQL's ILIKE is too
    OWN_MIGRATIONS: ClassVar[list[tuple[str, str]]] = []  # the backend's, after MIGRATIONS
    MIGRATIONS_LOCK: ClassVar[str] = ""  # a statement that makes migrating processes queue
    # LangGraph's tables: which rows of each a fork copies (after "WHERE thread_id = ?")
    CHECKPOINT_TABLES: ClassVar[dict[str, str]] = {}

    def __init__(self) -> None:
        self._saver: BaseCheckpointSaver[Any] | None = None

    # -- what a backend supplies -------------------------------------------------

    @abstractmethod
    def _execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        """Run one statement (`?` placeholders), outside a transaction unless in one."""

    @abstractmethod
    def _transaction(self, rollback: bool = False) -> AbstractContextManager[Any]:
        """A write transaction; `rollback`: always undone (to prove the database writable)."""

    @abstractmethod
    def _new_saver(self) -> BaseCheckpointSaver[Any]:
        """The checkpointer, on a connection of its own, its tables set up."""

    @abstractmethod
    def _columns(self, table: str) -> list[str]: ...

    @abstractmethod
    def _close(self) -> None: ...

    # -- the interface -----------------------------------------------------------

    @property
    def saver(self) -> BaseCheckpointSaver[Any]:
        if self._saver is None:
            self._saver = self._new_saver()
        return self._saver

    def _migrate(self) -> None:
        self._execute(
            "CREATE TABLE IF NOT EXISTS agentcli_migrations"
            " (name TEXT PRIMARY KEY, applied_at TEXT)"
        )
        done = {row[0] for row in self._execute("SELECT name FROM agentcli_migrations")}
        for name, sql in [*MIGRATIONS, *self.OWN_MIGRATIONS]:
            if name in done:
                continue
            with self._transaction():  # processes starting together on a new database
                if self.MIGRATIONS_LOCK:  # take turns; SQLite's BEGIN IMMEDIATE already does
                    self._execute(self.MIGRATIONS_LOCK)
                if self._execute(
                    "SELECT 1 FROM agentcli_migrations WHERE name = ?", (name,)
                ).fetchone():
                    continue  # another process applied it while this one waited
                for statement in sql.split(";"):
                    if statement.strip():
                        self._execute(statement)
                self._execute("INSERT INTO agentcli_migrations VALUES (?, ?)", (name, now()))

    def create(self, thread_id: str, title: str, workspace: str, model: str) -> ThreadRow:
        title, workspace = storable(title), storable(workspace)
        stamp = now()
        row = ThreadRow(thread_id, title, "idle", stamp, stamp, workspace, model)
        self._execute(
            "INSERT INTO agentcli_threads (thread_id, title, status, created_at, updated_at,"
            " workspace, model) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (thread_id, title, row.status, stamp, stamp, workspace, model),
        )
        return row

    def update(self, thread_id: str, **fields: Any) -> None:
        fields = {k: storable(v) if isinstance(v, str) else v for k, v in fields.items()}
        fields["updated_at"] = now()
        assignments = ", ".join(f"{name} = ?" for name in fields)
        self._execute(
            f"UPDATE agentcli_threads SET {assignments} WHERE thread_id = ?",
            (*fields.values(), thread_id),
        )

    def resolve(self, id_or_prefix: str) -> ThreadRow:
        """The thread with this id, or the only one whose id starts with it."""
        if not id_or_prefix.strip():
            raise ThreadNotFound("no thread id given")
        rows = self._select(
            f"WHERE thread_id = ? OR thread_id {self.LIKE} ? ESCAPE '\\'"
            " ORDER BY thread_id LIMIT 6",
            id_or_prefix,
            escape_like(id_or_prefix) + "%",
        )
        exact = [row for row in rows if row.thread_id == id_or_prefix]
        if exact or len(rows) == 1:
            return (exact or rows)[0]
        if not rows:
            raise ThreadNotFound(f"no thread '{id_or_prefix}' (agentcli threads list shows them)")
        names = ", ".join(row.thread_id for row in rows[:5])
        raise ThreadNotFound(f"thread id '{id_or_prefix}' is ambiguous: {names}")

    def latest(self, workspace: str) -> ThreadRow:
        """The most recently updated thread of a workspace (`--last`, `resume` with no id)."""
        rows = self.recent(1, workspace=workspace)
        if not rows:
            raise ThreadNotFound(f"no thread in {workspace} yet: start one with agentcli chat")
        return rows[0]

    def recent(
        self,
        limit: int | None = None,
        *,
        status: str | None = None,
        search: str | None = None,
        workspace: str | None = None,
    ) -> list[ThreadRow]:
        """Threads newest first, optionally filtered; `search` looks at titles and messages."""
        where: list[str] = []
        params: list[Any] = []
        if status:
            where.append("status = ?")
            params.append(status)
        if workspace:
            where.append("workspace = ?")
            params.append(workspace)
        if search:
            pattern = "%" + escape_like(search) + "%"
            where.append(
                f"(title {self.LIKE} ? ESCAPE '\\' OR thread_id IN (SELECT thread_id"
                f" FROM agentcli_text WHERE text {self.LIKE} ? ESCAPE '\\'))"
            )
            params += [pattern, pattern]
        clause = f"WHERE {' AND '.join(where)} " if where else ""
        if limit is not None:
            params.append(limit)
        return self._select(
            f"{clause}ORDER BY updated_at DESC, rowid DESC{'' if limit is None else ' LIMIT ?'}",
            *params,
        )

    def briefly(self, thread_id: str) -> AbstractContextManager[None]:
        """Hold a thread for a moment: ThreadBusy if a live process holds it (a crashed
        holder's lock is cleared by the backend)."""
        return self._holding(thread_id)

    def batch(self) -> AbstractContextManager[Any]:
        """Several writes in one transaction: one commit (one sync to disk) for all."""
        return self._transaction()

    def add_text(self, thread_id: str, turn: int, role: str, text: str) -> None:
        self._execute(
            "INSERT INTO agentcli_text VALUES (?, ?, ?, ?)",
            (thread_id, turn, role, storable(text)),
        )

    def add_usage(self, thread_id: str, usage: dict[str, int]) -> None:
        self._execute(
            "UPDATE agentcli_threads SET input_tokens = input_tokens + ?,"
            " output_tokens = output_tokens + ? WHERE thread_id = ?",
            (usage.get("input_tokens", 0), usage.get("output_tokens", 0), thread_id),
        )

    def rename(self, thread_id: str, title: str) -> None:
        self.update(thread_id, title=title)

    def delete(self, thread_id: str) -> None:
        """The thread's checkpoints, writes, text and index row (refused while in use)."""
        with self._holding(thread_id):
            self.saver.delete_thread(thread_id)
            with self._transaction():
                for table in ("agentcli_text", "agentcli_calls", "agentcli_threads"):
                    self._execute(f"DELETE FROM {table} WHERE thread_id = ?", (thread_id,))

    def copy(self, source: ThreadRow, target: str, upto: str | None, turns: int) -> ThreadRow:
        """A new thread with the source's checkpoints up to `upto` (all if None) and the
        text of its first `turns` user turns.

        Every ancestor checkpoint and its writes are copied, so channels that are rebuilt
        from history (DeltaChannel) rebuild the same. LangGraph's savers have no
        copy_thread, so this copies rows of their tables (CHECKPOINT_TABLES).
        """
        self.saver  # noqa: B018 - its tables exist from here on
        with self._transaction():
            if upto is not None:
                self._execute(
                    "CREATE TEMP TABLE IF NOT EXISTS agentcli_chain (id TEXT PRIMARY KEY)"
                )
                self._execute("DELETE FROM agentcli_chain")
                self._execute(CHAIN_SQL, (upto, source.thread_id))
            for table, rows in self.CHECKPOINT_TABLES.items():
                rest = ", ".join(f'"{c}"' for c in self._columns(table) if c != "thread_id")
                self._execute(
                    f"INSERT INTO {table} (thread_id, {rest}) SELECT CAST(? AS TEXT), {rest}"
                    f" FROM {table} WHERE thread_id = ?" + ("" if upto is None else rows),
                    (target, source.thread_id),
                )
        row = self.create(target, source.title, source.workspace, source.model)
        self._execute(
            "INSERT INTO agentcli_text SELECT CAST(? AS TEXT), turn, role, text FROM agentcli_text"
            " WHERE thread_id = ? AND turn <= ?",
            (target, source.thread_id, turns),
        )
        self._execute(  # a cut-off call in the copy is asked about again there too (and
            # its first run, if still alive, ended first: the process it ran under is copied)
            "INSERT INTO agentcli_calls (thread_id, call_id, state, at, host, boot, pid,"
            " pid_started) SELECT CAST(? AS TEXT), call_id, state, at, host, boot, pid,"
            " pid_started FROM agentcli_calls WHERE thread_id = ?",
            (target, source.thread_id),
        )
        self.update(target, turns=turns, status=source.status if upto is None else "idle")
        row.turns = turns
        return row

    def check(self) -> int:
        """Write a row and roll it back; the number of threads (for `doctor`)."""
        try:
            with self._transaction(rollback=True):
                self._execute("INSERT INTO agentcli_migrations VALUES ('doctor', 'rolled back')")
            return int(self._execute("SELECT count(*) FROM agentcli_threads").fetchone()[0])
        except self.ERRORS as exc:
            raise AgentcliError(f"{self.location} is not writable: {exc}") from None

    def _select(self, where: str, *params: Any) -> list[ThreadRow]:
        cursor = self._execute(
            "SELECT thread_id, title, status, created_at, updated_at, workspace, model, messages,"
            f" last_error, turns, input_tokens, output_tokens FROM agentcli_threads {where}",
            params,
        )
        return [ThreadRow(*row) for row in cursor]

    def close(self) -> None:
        self.release()
        self._close()


def open_store(settings: Settings) -> Store:
    """The store `storage.db` names: a postgresql:// URL, or else a SQLite file."""
    if settings.db_url:
        try:
            from agentcli.pgstore import PostgresStore
        except ImportError as exc:
            raise ConfigError(
                f"a postgresql:// database needs {exc.name or 'psycopg'}:"
                " pip install 'agentcli[postgres]'"
            ) from None
        return PostgresStore(settings.db_url)
    from agentcli.sqlitestore import SqliteStore

    return SqliteStore(settings.db_path)
