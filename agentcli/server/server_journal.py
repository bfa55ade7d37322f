"""The call journal of runs on LangGraph Server (graph.py gives it to every run's context).

It is agentcli's own database, the one the server's `storage.db` names (a SQLite file, by
default threads.db in the server's data folder, or PostgreSQL), opened by the first tool
call and kept open: the server's settings choose it, never a client. With it a tools task
LangGraph runs again after the server died mid-call asks the person, as locally
(agent/review/cut_off_calls.py).

The journal can only recognise a task LangGraph runs again from a saved checkpoint. The
in-memory runtime of `langgraph dev` saves nothing at once: it keeps threads, runs and
checkpoints in memory and writes them to its .langgraph_api folder every 10 s, so a
server killed in between restarts from older state, and the task it runs again has an id
the journal has never seen. So before a call is recorded as started, that runtime's state
is written out too (`persist_dev_state`, threads/langgraph_internals.py): the checkpoint
that holds the task and the run that drives it are on disk before the tool runs. Other
runtimes keep their own state.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING

from agentcli.threads.langgraph_internals import persist_dev_state

if TYPE_CHECKING:
    from agentcli.config import Settings
    from agentcli.threads.call_journal import RunProcess
    from agentcli.threads.store import Store

log = logging.getLogger("agentcli.server.graph")


class ServerJournal:
    """journal.CallJournal over the server's store, opened when a tool first runs."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._store: Store | None = None
        self._opening = threading.Lock()

    @property
    def store(self) -> Store:
        with self._opening:
            if self._store is None:
                from agentcli.threads.backends import open_store

                self._store = open_store(self.settings)
                log.info("tool calls are journalled in %s", self._store.location)
            return self._store

    def call_state(self, thread_id: str, call_id: str) -> str | None:
        return self.store.call_state(thread_id, call_id)

    def call_started(self, thread_id: str, call_id: str) -> None:
        persist_dev_state()
        self.store.call_started(thread_id, call_id)

    def call_process(self, thread_id: str, call_id: str, process: RunProcess) -> None:
        self.store.call_process(thread_id, call_id, process)

    def call_process_of(self, thread_id: str, call_id: str) -> RunProcess | None:
        return self.store.call_process_of(thread_id, call_id)

    def call_finished(self, thread_id: str, call_id: str) -> None:
        self.store.call_finished(thread_id, call_id)
