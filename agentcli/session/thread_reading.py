"""Stored threads as a person or a program reads them (`threads list`, `show`, `export`):
the index's rows and a thread's transcript, with what the settings' redactor knows (a key
the person typed, one an older thread kept) taken out, and the files each call changed.
Listing reads the index alone: LangChain and the checkpoints load only for a transcript."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from agentcli.agent.outbound import settings_redactor
from agentcli.config import Settings
from agentcli.thread_rows import ThreadRow, ThreadStatus
from agentcli.threads.store import Store

if TYPE_CHECKING:
    from agentcli.threads.on_server import ServerThreads


def listed(
    settings: Settings,
    index: Store | ServerThreads,
    limit: int | None,
    status: str | None,
    search: str | None,
    workspace: str | None,
) -> list[ThreadRow]:
    """The index's rows, newest first; on a store, a run that died is settled first (its
    thread is not `running` forever)."""
    if isinstance(index, Store) and index.recent(1, status=ThreadStatus.RUNNING):
        from agentcli.session.stale_threads import settle_stale  # a run that died: what it left

        settle_stale(index)
    rows = index.recent(limit, status=status, search=search, workspace=workspace)
    redact = settings_redactor(settings)  # titles of threads older than their redaction
    return [replace(r, title=redact(r.title), last_error=redact.value(r.last_error)) for r in rows]


def server_index(url: str) -> ServerThreads:
    """The thread index of the LangGraph server at `url` (`threads list --server`)."""
    from agentcli.threads.on_server import ServerThreads, connect

    return ServerThreads(connect(url), url)


def shown(
    settings: Settings, store: Store, thread_id: str
) -> tuple[ThreadRow, list[dict[str, Any]]]:
    """A thread's row and transcript entries (session/transcript.py), each call with the
    files it changed."""
    from agentcli.session import history
    from agentcli.session.agent_changes import mark_changed_files
    from agentcli.session.transcript import entries

    row = store.resolve(thread_id)
    values = history.values(store, row.thread_id)
    turns = entries(values)
    mark_changed_files(settings, row, values.get("messages", []), turns)
    redact = settings_redactor(settings)  # an error may quote what a request carried
    row = replace(row, title=redact(row.title), last_error=redact.value(row.last_error))
    return row, redact.value(turns)


def exported(
    settings: Settings,
    store: Store,
    thread_id: str,
    form: Callable[[ThreadRow, dict[str, Any]], str],
) -> str:
    """A thread written out in `form` (session/transcript.to_json, the Markdown export):
    JSON is exact data (controls escaped), Markdown shows them as marks; either way, what
    the redactor knows does not leave."""
    from agentcli.session import history

    row = store.resolve(thread_id)
    return settings_redactor(settings)(form(row, history.values(store, row.thread_id)))
