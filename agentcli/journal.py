"""The durable record of each tool call's run: written before the tool starts, marked
when it ends. LangGraph re-runs a tool task whose result was not saved (the process was
killed mid-run, or just after); this record is how agentcli tells such a re-run from a
first run, and asks the person again instead of running a side effect twice in silence.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, Protocol


class CallJournal(Protocol):
    def call_state(self, thread_id: str, call_id: str) -> str | None: ...
    def call_started(self, thread_id: str, call_id: str) -> None: ...
    def call_finished(self, thread_id: str, call_id: str) -> None: ...


class JournalTables:
    """The Store's side of it, over the `agentcli_calls` table (migration 004_calls)."""

    @abstractmethod
    def _execute(self, sql: str, params: Sequence[Any] = ()) -> Any: ...

    def call_state(self, thread_id: str, call_id: str) -> str | None:
        """None (never ran), "started" (may have partly run) or "finished"."""
        row = self._execute(
            "SELECT state FROM agentcli_calls WHERE thread_id = ? AND call_id = ?",
            (thread_id, call_id),
        ).fetchone()
        return None if row is None else str(row[0])

    def call_started(self, thread_id: str, call_id: str) -> None:
        self._execute(
            "INSERT INTO agentcli_calls VALUES (?, ?, 'started', ?) ON CONFLICT"
            " (thread_id, call_id) DO UPDATE SET state = 'started', at = excluded.at",
            (thread_id, call_id, _now()),
        )

    def call_finished(self, thread_id: str, call_id: str) -> None:
        self._execute(
            "UPDATE agentcli_calls SET state = 'finished', at = ? WHERE thread_id = ?"
            " AND call_id = ?",
            (_now(), thread_id, call_id),
        )


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
