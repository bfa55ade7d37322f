"""Copying a thread: the forked thread starts with the source's checkpoints up to a point,
its text and its journal of cut-off calls (`threads fork`, `/fork`)."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, ClassVar

from agentcli.thread_rows import ThreadRow, ThreadStatus

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver


class ThreadCopies:
    """The part of a Store that forks a thread; the Store and its backend supply the rest."""

    SAVER: ClassVar[str] = ""  # whose tables a fork copies rows of: "sqlite", "postgres"

    @abstractmethod
    def _execute(self, sql: str, params: Sequence[Any] = ()) -> Any: ...

    @abstractmethod
    def _transaction(self, rollback: bool = False) -> AbstractContextManager[Any]: ...

    @abstractmethod
    def _columns(self, table: str) -> list[str]: ...

    @property
    @abstractmethod
    def saver(self) -> BaseCheckpointSaver[Any]: ...

    @abstractmethod
    def create(
        self, thread_id: str, title: str, workspace: str, model: str, base_url: str | None = None
    ) -> ThreadRow: ...

    @abstractmethod
    def update(self, thread_id: str, **fields: Any) -> None: ...

    def copy(
        self, source: ThreadRow, target: str, upto: str | None, turns: int, title: str
    ) -> ThreadRow:
        """A new thread named `title` with the source's checkpoints up to `upto` (all if
        None), the text of its first `turns` user turns, and its model and server.

        Every ancestor checkpoint and its writes are copied, so channels that are rebuilt
        from history (DeltaChannel) rebuild the same. LangGraph's savers have no
        copy_thread, so this copies rows of their tables (langgraph_internals.fork_tables).
        """
        self.saver  # noqa: B018 - its tables exist from here on, LangGraph loaded
        from agentcli.threads.langgraph_internals import FORK_CHAIN_SQL, fork_tables

        with self._transaction():
            if upto is not None:
                self._execute(
                    "CREATE TEMP TABLE IF NOT EXISTS agentcli_chain (id TEXT PRIMARY KEY)"
                )
                self._execute("DELETE FROM agentcli_chain")
                self._execute(FORK_CHAIN_SQL, (upto, source.thread_id))
            for table, rows in fork_tables(self.SAVER).items():
                rest = ", ".join(f'"{c}"' for c in self._columns(table) if c != "thread_id")
                self._execute(
                    f"INSERT INTO {table} (thread_id, {rest}) SELECT CAST(? AS TEXT), {rest}"
                    f" FROM {table} WHERE thread_id = ?" + ("" if upto is None else rows),
                    (target, source.thread_id),
                )
        row = self.create(target, title, source.workspace, source.model, source.base_url)
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
        self.update(
            target, turns=turns, status=source.status if upto is None else ThreadStatus.IDLE
        )
        row.turns = turns
        return row
