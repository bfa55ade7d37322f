"""Where threads live: a LangGraph checkpointer plus a small index of our own, in one database.

One `Store` interface, two backends: SQLite (sqlite_backend.py, the default) and PostgreSQL
(postgres_backend.py, the `postgres` extra). The SQL they share is written once, here, in
thread_lookup.py, thread_fork.py and schema.py, with `?` placeholders; a backend runs it and
supplies what differs (connections, transactions, the checkpointer's tables, the per-thread
lock of locks.py).

The index (one row per thread, ../thread_rows.py) lets `threads list` and id lookups run without
deserialising any checkpoint. Its schema changes only through named, append-only
migrations (schema.py).
"""

from __future__ import annotations

import secrets
from abc import abstractmethod
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, ClassVar

from agentcli.errors import AgentcliError, ConfigError
from agentcli.thread_rows import ThreadRow, ThreadStatus, now, stamp, storable
from agentcli.threads.audit_anchors import AuditAnchors
from agentcli.threads.call_journal import JournalTables
from agentcli.threads.locks import ThreadLocks
from agentcli.threads.schema import MIGRATIONS
from agentcli.threads.thread_fork import ThreadCopies
from agentcli.threads.thread_lookup import ThreadLookup

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver


# by thread_id
OWN_TABLES = ("agentcli_text", "agentcli_calls", "agentcli_audit_anchor", "agentcli_review_preview")
SECRET_BYTES = 32
STARTING = "(starting)"  # a claimed thread's title until its first message is stored


class Store(ThreadLocks, JournalTables, AuditAnchors, ThreadLookup, ThreadCopies):
    """Threads, their index and their text; one session's lock on the thread it drives.

    Finding threads is ThreadLookup's (thread_lookup.py), forking them ThreadCopies'
    (thread_fork.py), the lock ThreadLocks' and the call journal JournalTables'."""

    location: str  # for messages: the file, or the URL with its password masked
    OWN_MIGRATIONS: ClassVar[list[tuple[str, str]]] = []  # the backend's, after MIGRATIONS
    MIGRATIONS_LOCK: ClassVar[str] = ""  # a statement that makes migrating processes queue

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

    def create(
        self, thread_id: str, title: str, workspace: str, model: str, base_url: str | None = None
    ) -> ThreadRow:
        """The thread's index row; a row `claim` made for it (no message yet) is taken over."""
        title, workspace = storable(title), storable(workspace)
        at = stamp()
        row = ThreadRow(
            thread_id, title, ThreadStatus.IDLE, at, at, workspace, model, base_url=base_url
        )
        self._execute(
            "INSERT INTO agentcli_threads (thread_id, title, status, created_at, updated_at,"
            " workspace, model, base_url) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT"
            " (thread_id) DO UPDATE SET title = excluded.title, workspace = excluded.workspace,"
            " model = excluded.model, base_url = excluded.base_url, updated_at ="
            " excluded.updated_at WHERE agentcli_threads.turns = 0",
            (thread_id, title, row.status, at, at, workspace, model, base_url),
        )
        return row

    def claim(self, thread_id: str, workspace: str, model: str) -> None:
        """Index a new thread as running and hold it, before its run has even loaded: a
        run is listed the moment it starts, and no other process can take its thread. Its
        first message makes it a thread (`create` takes the row over); a run that ends
        before that removes it (`unclaim`), and one that dies is cleared by the next
        `threads list` (session/stale_threads.py)."""
        self.hold(thread_id)
        at = stamp()
        self._execute(
            "INSERT INTO agentcli_threads (thread_id, title, status, created_at, updated_at,"
            " workspace, model) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (thread_id, STARTING, ThreadStatus.RUNNING, at, at, storable(workspace), model),
        )

    def unclaim(self, thread_id: str) -> None:
        """Remove a claimed thread that never got its first message (its claimer holds it,
        or has died: the caller holds it)."""
        self._execute(
            "DELETE FROM agentcli_threads WHERE thread_id = ? AND turns = 0 AND title = ?",
            (thread_id, STARTING),
        )

    def update(self, thread_id: str, **fields: Any) -> None:
        """Set the row's `fields`. A new status drops the thread's review preview: whatever
        the thread waits on now, the preview was made for before."""
        fields = {k: storable(v) if isinstance(v, str) else v for k, v in fields.items()}
        fields["updated_at"] = stamp()
        assignments = ", ".join(f"{name} = ?" for name in fields)
        self._execute(
            f"UPDATE agentcli_threads SET {assignments} WHERE thread_id = ?",
            (*fields.values(), thread_id),
        )
        if "status" in fields:
            self._execute("DELETE FROM agentcli_review_preview WHERE thread_id = ?", (thread_id,))

    def keep_preview(self, thread_id: str, preview: str) -> None:
        """What a parked thread's review shows (session/review_preview.py), for `resume` to
        draw before the session is made. Anyone who can write the store can write it: it
        is only ever drawn, and a key pressed at it applies only once the thread's own
        state is found to draw the same."""
        self._execute(
            "INSERT INTO agentcli_review_preview (thread_id, preview) VALUES (?, ?)"
            " ON CONFLICT (thread_id) DO UPDATE SET preview = excluded.preview",
            (thread_id, storable(preview)),
        )

    def preview(self, thread_id: str) -> str | None:
        """The review preview `keep_preview` kept for the thread, if any."""
        row = self._execute(
            "SELECT preview FROM agentcli_review_preview WHERE thread_id = ?", (thread_id,)
        ).fetchone()
        return None if row is None else str(row[0])

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
                for table in (*OWN_TABLES, "agentcli_threads"):
                    self._execute(f"DELETE FROM {table} WHERE thread_id = ?", (thread_id,))

    def secret(self, name: str) -> bytes:
        """The store's own secret `name` (migration 008), made by the first process that asks.

        The key that seals approvals and the audit chain belongs to the database the threads
        live in, not to the installation that opened it: every process that can write the
        threads, on any machine, seals and checks with the same key. A process that finds
        none inserts 32 random bytes of its own and reads back what is there; the name is
        the primary key, so of processes making it at once exactly one insert lands and all
        of them read the same secret.
        """
        found = self._read_secret(name)
        if found is None:
            self._execute(
                "INSERT INTO agentcli_secrets (name, secret, at) VALUES (?, ?, ?)"
                " ON CONFLICT (name) DO NOTHING",
                (name, secrets.token_hex(SECRET_BYTES), now()),
            )
            found = self._read_secret(name)
        try:
            secret = bytes.fromhex(found or "")
        except ValueError:
            secret = b""
        if len(secret) < SECRET_BYTES:
            raise ConfigError(
                f"the {name} in {self.location} (table agentcli_secrets) is damaged: delete its"
                " row to make a new one (what the old one sealed will no longer verify)"
            )
        return secret

    def _read_secret(self, name: str) -> str | None:
        row = self._execute("SELECT secret FROM agentcli_secrets WHERE name = ?", (name,))
        found = row.fetchone()
        return None if found is None else str(found[0])

    def check(self) -> int:
        """Write a row and roll it back; the number of threads (for `doctor`)."""
        try:
            with self._transaction(rollback=True):
                self._execute("INSERT INTO agentcli_migrations VALUES ('doctor', 'rolled back')")
            return int(self._execute("SELECT count(*) FROM agentcli_threads").fetchone()[0])
        except self.ERRORS as exc:
            raise AgentcliError(f"{self.location} is not writable: {exc}") from None

    def close(self) -> None:
        self.release()
        self._close()
