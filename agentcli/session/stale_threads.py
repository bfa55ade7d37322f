"""Threads left "running" by a process that died (kill -9, power loss): each given the status
its saved state shows, without running anything.
"""

from __future__ import annotations

from langchain_core.language_models import BaseChatModel

from agentcli.agent.graph import build_graph
from agentcli.agent.waiting import waiting as waiting_on
from agentcli.errors import ThreadBusy
from agentcli.session.stream_events import review_in
from agentcli.threads.store import Store
from agentcli.threads.thread_rows import ThreadStatus


def settle_stale(store: Store) -> None:
    """Threads the index says are running while no process holds them: their run died (kill
    -9, power loss). Each gets the status its saved state shows, read with a graph that has
    no model and no tools: nothing runs. A call cut off mid-run makes it awaiting_approval."""
    rows = store.recent(status=ThreadStatus.RUNNING)
    if not rows:
        return
    graph = build_graph(_no_model, []).compile(checkpointer=store.saver)
    for row in rows:
        try:
            with store.briefly(row.thread_id):
                snapshot = graph.get_state({"configurable": {"thread_id": row.thread_id}})
                waiting = waiting_on(snapshot, store, row.thread_id)
                error = None
                if review_in(row.thread_id, (item.value for item in waiting)):
                    status = ThreadStatus.AWAITING_APPROVAL
                elif snapshot.next:
                    status, error = ThreadStatus.ERROR, "interrupted before the run finished"
                else:
                    status = ThreadStatus.IDLE
                store.update(row.thread_id, status=status, last_error=error)
        except ThreadBusy:  # really running
            continue


def _no_model() -> BaseChatModel:
    raise AssertionError("reading a thread's state never asks the model")
