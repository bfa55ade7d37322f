"""Finding threads in the index: by id or prefix, the latest of a workspace, and the list
(newest first, filtered by status, workspace or text) that `threads list` and `--last` use."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar

from agentcli.errors import ThreadNotFound
from agentcli.thread_rows import ThreadRow
from agentcli.threads.schema import escape_like


class ThreadLookup:
    """The part of a Store that reads the index; a backend supplies `_execute`."""

    LIKE: ClassVar[str] = "LIKE"  # SQLite's is case-insensitive: PostgreSQL's ILIKE is too

    @abstractmethod
    def _execute(self, sql: str, params: Sequence[Any] = ()) -> Any: ...

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

    def _select(self, where: str, *params: Any) -> list[ThreadRow]:
        cursor = self._execute(
            "SELECT thread_id, title, status, created_at, updated_at, workspace, model, messages,"
            " last_error, turns, input_tokens, output_tokens, note, base_url"
            f" FROM agentcli_threads {where}",
            params,
        )
        return [ThreadRow(*row) for row in cursor]
