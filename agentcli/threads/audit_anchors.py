"""Where each thread's audit chain ends, kept outside the checkpoint (migration 007).

The chain (agent/audit/chain.py) proves each record follows the one before it, but
not that none were removed from the end: the anchor does. One row per thread: how many
records the chain had, the last one's hash, and a seal over the two and the thread id made
with the approval key, so that the row cannot be moved to a shorter chain without the key.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from typing import Any

from agentcli.thread_rows import now


class AuditAnchors:
    """The Store's side of it, over the `agentcli_audit_anchor` table."""

    @abstractmethod
    def _execute(self, sql: str, params: Sequence[Any] = ()) -> Any: ...

    def audit_anchor(self, thread_id: str) -> tuple[int, str, str] | None:
        """(records, last hash, seal) of the thread's anchored chain end, or None."""
        row = self._execute(
            "SELECT records, hash, seal FROM agentcli_audit_anchor WHERE thread_id = ?",
            (thread_id,),
        ).fetchone()
        return None if row is None else (int(row[0]), str(row[1]), str(row[2]))

    def anchor_audit(self, thread_id: str, records: int, last: str, seal: str) -> None:
        self._execute(
            "INSERT INTO agentcli_audit_anchor (thread_id, records, hash, seal, at)"
            " VALUES (?, ?, ?, ?, ?) ON CONFLICT (thread_id) DO UPDATE SET"
            " records = excluded.records, hash = excluded.hash, seal = excluded.seal,"
            " at = excluded.at",
            (thread_id, records, last, seal, now()),
        )

    def anchored_threads(self) -> list[str]:
        """Every thread with an anchor (also one whose index row was removed)."""
        rows = self._execute("SELECT thread_id FROM agentcli_audit_anchor").fetchall()
        return [str(row[0]) for row in rows]
