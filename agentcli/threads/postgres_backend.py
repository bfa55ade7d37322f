"""The PostgreSQL backend (`pip install 'agentcli[postgres]'`): LangGraph's PostgresSaver and
agentcli's tables in one database that several machines share. A session's lock on its
thread is an advisory lock of its connection: the server lets go when the process ends,
however it ends."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from importlib.util import find_spec
from socket import gethostname
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import urlsplit

import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg.rows import dict_row

from agentcli.config.database_url import mask_url
from agentcli.errors import AgentcliError, ConfigError
from agentcli.threads.locks import Holder
from agentcli.threads.store import Store

if TYPE_CHECKING:
    from langgraph.checkpoint.postgres import PostgresSaver

# looked for, not imported: it is slow to import, so it loads when a store first needs it
if find_spec("langgraph.checkpoint.postgres") is None:
    raise ImportError("no langgraph.checkpoint.postgres", name="langgraph-checkpoint-postgres")

LOCKS = 0x61676E74  # "agnt": the advisory-lock key space (classid) of thread locks
MIGRATING = LOCKS + 1  # held while one process sets up or migrates the tables
CONNECT_TIMEOUT_S = 10
MIGRATION_WAIT_S = 120
KEEPALIVES = (  # the server's probes of a silent connection: dead after 30 + 3 x 10 s
    "SET tcp_keepalives_idle = 30; SET tcp_keepalives_interval = 10; SET tcp_keepalives_count = 3"
)


class PostgresStore(Store):
    LIKE = "ILIKE"
    OWN_MIGRATIONS: ClassVar[list[tuple[str, str]]] = [
        (
            "pg_001_order",  # SQLite's rowid: insertion order, to list same-second threads
            """ALTER TABLE agentcli_threads ADD COLUMN rowid BIGSERIAL;
            ALTER TABLE agentcli_threads ALTER COLUMN input_tokens TYPE BIGINT,
                ALTER COLUMN output_tokens TYPE BIGINT;""",
        ),
    ]
    MIGRATIONS_LOCK: ClassVar[str] = "LOCK TABLE agentcli_migrations IN EXCLUSIVE MODE"
    SAVER: ClassVar[str] = "postgres"
    ERRORS = (psycopg.Error,)

    def __init__(self, url: str) -> None:
        super().__init__()
        self._secret = ""
        self.location = mask_url(url)
        try:
            self._secret = urlsplit(url).password or ""
            params = conninfo_to_dict(url)
        except (ValueError, psycopg.ProgrammingError) as exc:
            problem = self._line(exc)
            raise ConfigError(f"invalid PostgreSQL URL {self.location}: {problem}") from None
        params.setdefault("connect_timeout", CONNECT_TIMEOUT_S)
        params.setdefault("application_name", f"agentcli pid {os.getpid()} on {gethostname()}")
        self._secret = str(params.get("password") or self._secret)
        host = params.get("host") or params.get("hostaddr") or "localhost"
        port = f":{params['port']}" if params.get("port") else ""
        self._where = f"{host}{port}/{params.get('dbname') or params.get('user') or ''}"
        self._conninfo = make_conninfo("", **params)
        self._saver_conn: psycopg.Connection[Any] | None = None
        self.conn: psycopg.Connection[Any] = self._connect()
        # the thread locks live on this connection: if this host vanishes (power loss), the
        # server finds the connection dead within about a minute and drops them
        self.conn.execute(KEEPALIVES)
        with self._migrating():
            self._migrate()

    def _connect(self, **options: Any) -> psycopg.Connection[Any]:
        try:
            return psycopg.connect(self._conninfo, autocommit=True, **options)
        except psycopg.Error as exc:
            raise AgentcliError(
                f"cannot connect to PostgreSQL at {self._where}: {self._line(exc)}"
            ) from None

    def _line(self, exc: BaseException) -> str:
        """The error's first line, never the password."""
        line = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        return line.replace(self._secret, "***") if self._secret else line

    @contextmanager
    def _migrating(self) -> Iterator[None]:
        """One process at a time creates and migrates tables (others wait, then see them).

        Polled, not waited for in pg_advisory_lock: a waiting statement holds a snapshot,
        and PostgresSaver.setup's CREATE INDEX CONCURRENTLY in the process holding the lock
        waits for every snapshot: a deadlock the server cannot see (seen on a new database).
        """
        deadline = time.monotonic() + MIGRATION_WAIT_S
        while not self._true(f"SELECT pg_try_advisory_lock({MIGRATING}, 0)"):
            if time.monotonic() > deadline:
                raise AgentcliError(
                    f"PostgreSQL at {self._where}: another process has been setting up"
                    f" agentcli's tables for {MIGRATION_WAIT_S} s"
                )
            time.sleep(0.05)
        try:
            yield
        finally:
            self.conn.execute(f"SELECT pg_advisory_unlock({MIGRATING}, 0)")

    def _execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        if not params:
            return self.conn.execute(sql)
        return self.conn.execute(sql.replace("%", "%%").replace("?", "%s"), params)

    def _true(self, sql: str, params: Sequence[Any] = ()) -> bool:
        return bool(self._execute(sql, params).fetchone()[0])

    def _transaction(self, rollback: bool = False) -> AbstractContextManager[Any]:
        return self.conn.transaction(force_rollback=rollback)

    def _new_saver(self) -> PostgresSaver:
        from langgraph.checkpoint.postgres import PostgresSaver

        from agentcli.threads.langgraph_internals import Recall, checkpoint_serializer

        class Saver(Recall, PostgresSaver):
            pass

        self._saver_conn = self._connect(prepare_threshold=0, row_factory=dict_row)
        saver = Saver(self._saver_conn, serde=checkpoint_serializer())
        with self._migrating():
            saver.setup()
        return saver

    def _columns(self, table: str) -> list[str]:
        rows = self._execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = ?"
            " AND table_schema = current_schema() ORDER BY ordinal_position",
            (table,),
        )
        return [row[0] for row in rows]

    def _try_lock(self, thread_id: str) -> str | None:
        if self._true(f"SELECT pg_try_advisory_lock({LOCKS}, hashtext(?))", (thread_id,)):
            return None
        holder = self._execute(
            "SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid"
            f" WHERE l.locktype = 'advisory' AND l.granted AND l.classid = {LOCKS}"
            " AND l.objid = hashtext(?)::oid AND l.objsubid = 2",
            (thread_id,),
        ).fetchone()
        name = holder[0] if holder else ""
        return name.removeprefix("agentcli ") if name.startswith("agentcli pid") else "elsewhere"

    def _holder(self, thread_id: str) -> Holder | None:
        """From the holder's connection's name (`agentcli pid N on HOST`): a claim only,
        which locks.py checks against the process before it signals anything."""
        holder = self._try_lock(thread_id)
        if holder is None:
            self._unlock(thread_id)  # taken just now: it was free
            return None
        found = re.fullmatch(r"pid (\d+) on (.+)", holder)
        return Holder(int(found[1]), found[2]) if found else None

    def _unlock(self, thread_id: str) -> None:
        self._execute(f"SELECT pg_advisory_unlock({LOCKS}, hashtext(?))", (thread_id,))

    def _close(self) -> None:
        self.conn.close()
        if self._saver_conn is not None:
            self._saver_conn.close()
