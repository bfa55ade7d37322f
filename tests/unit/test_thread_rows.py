"""A thread row's status (agentcli/thread_rows.py) is a ThreadStatus however the row was read:
from SQLite, PostgreSQL or a LangGraph server; a status agentcli does not know is an error."""

from __future__ import annotations

import pytest

from agentcli.config import Settings
from agentcli.thread_rows import ThreadStatus
from agentcli.threads.backends import open_store
from agentcli.threads.on_server import _row


@pytest.mark.backends
def test_the_index_reads_each_status_back_as_a_thread_status(database: str) -> None:
    store = open_store(Settings(db=database))
    try:
        for thread, status in [("t1", ThreadStatus.AWAITING_APPROVAL), ("t2", "archived")]:
            store.create(thread, thread, "/w", "m")
            store.update(thread, status=status)  # "archived": by hand, or another version
        rows = {row.thread_id: row.status for row in store.recent()}
        assert rows == {"t1": ThreadStatus.AWAITING_APPROVAL, "t2": ThreadStatus.ERROR}
        assert all(type(status) is ThreadStatus for status in rows.values())
        assert type(store.resolve("t1").status) is ThreadStatus
    finally:
        store.close()


@pytest.mark.parametrize(
    ("server_status", "interrupts", "status"),
    [
        ("idle", {}, ThreadStatus.IDLE),
        ("busy", {}, ThreadStatus.BUSY),
        ("interrupted", {"task": [{"value": {}}]}, ThreadStatus.AWAITING_APPROVAL),
        ("interrupted", {}, ThreadStatus.ERROR),  # interrupted by an error, not a review
        ("error", {}, ThreadStatus.ERROR),
        ("paused", {}, ThreadStatus.ERROR),  # a status a newer server might add
        (None, {}, ThreadStatus.IDLE),
    ],
)
def test_a_servers_thread_status_is_a_thread_status(
    server_status: str | None, interrupts: dict[str, list[object]], status: ThreadStatus
) -> None:
    thread = {"thread_id": "abc", "status": server_status, "interrupts": interrupts}
    row = _row(thread)
    assert row.status == status and type(row.status) is ThreadStatus
