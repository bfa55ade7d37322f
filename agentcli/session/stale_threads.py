"""Threads left "running" by a process that died (kill -9, power loss): each given the status
its saved state shows, without running anything.

The index says `running` from the moment a run claims its thread (threads/store.py, `claim`)
until the run records how it ended; the thread's lock (threads/locks.py) says whether a
process still drives it. A row that says running while no live process holds the lock is
stale: on SQLite the lock row names a pid and its start time, and a pid gone from this host
(or reused by another process) frees it; on PostgreSQL the lock is the holder's connection's
advisory lock, which the server drops when that connection ends, however the process ended.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentcli.errors import ThreadBusy
from agentcli.thread_rows import ThreadStatus
from agentcli.threads.store import Store

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel


def settle_stale(store: Store) -> None:
    """Threads the index says are running while no process holds them: their run died (kill
    -9, power loss). Each gets the status its saved state shows, read with a graph that has
    no model and no tools: nothing runs. A call cut off mid-run makes it awaiting_approval;
    a thread claimed by a run that died before its first message is removed. Threads a live
    process holds are skipped at the cost of one lock probe each (nothing else loads)."""
    graph: Any = None
    for row in store.recent(status=ThreadStatus.RUNNING):
        try:
            with store.briefly(row.thread_id):
                if row.turns == 0:
                    store.unclaim(row.thread_id)
                    continue
                graph = graph or _reader(store)
                store.update(row.thread_id, **_settled(graph, store, row.thread_id))
        except ThreadBusy:  # really running
            continue


def _reader(store: Store) -> Any:
    from agentcli.agent.agent_graph import build_graph

    return build_graph(_no_model, []).compile(checkpointer=store.saver)


def _settled(graph: Any, store: Store, thread_id: str) -> dict[str, Any]:
    from agentcli.agent.waiting import waiting as waiting_on
    from agentcli.session.stream_events import review_in

    snapshot = graph.get_state({"configurable": {"thread_id": thread_id}})
    waiting = waiting_on(snapshot, store, thread_id)
    if review_in(thread_id, (item.value for item in waiting)):
        return {"status": ThreadStatus.AWAITING_APPROVAL, "last_error": None}
    if snapshot.next:
        return {"status": ThreadStatus.ERROR, "last_error": "interrupted before the run finished"}
    return {"status": ThreadStatus.IDLE, "last_error": None}


def _no_model() -> BaseChatModel:
    raise AssertionError("reading a thread's state never asks the model")
