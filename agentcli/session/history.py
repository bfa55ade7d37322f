"""A thread's saved states, read through the graph (never a model): values, turns, forks."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from langchain_core.runnables import RunnableConfig

from agentcli.agent.agent_graph import build_graph
from agentcli.errors import UsageError
from agentcli.thread_rows import ThreadRow
from agentcli.threads.store import Store


@dataclass
class Turn:
    number: int
    text: str
    checkpoint_id: str | None  # the state just before this message: where a fork starts
    at: str


def _reader(store: Store) -> Any:
    def no_model() -> Any:
        raise UsageError("reading a thread never calls the model")

    return build_graph(no_model, []).compile(checkpointer=store.saver)


def _config(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}}


def values(store: Store, thread_id: str, reader: Any = None) -> dict[str, Any]:
    """The thread's latest state: messages, audit, allowed tools (`reader`: one compiled
    graph for many threads, as `reader` keeps)."""
    return dict((reader or _reader(store)).get_state(_config(thread_id)).values)


def reader(store: Store) -> Callable[[str], dict[str, Any]]:
    """A thread's latest state by id, for reading many threads (one compiled graph)."""
    graph = _reader(store)
    return lambda thread_id: values(store, thread_id, graph)


def turns(store: Store, thread_id: str) -> list[Turn]:
    """Each user message with the checkpoint saved just before it."""
    config: RunnableConfig = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
    inputs = list(store.saver.list(config, filter={"source": "input"}))[::-1]
    texts = [m.text for m in values(store, thread_id).get("messages", []) if m.type == "human"]
    return [
        Turn(
            number,
            texts[number - 1] if number <= len(texts) else "",
            saved.parent_config["configurable"]["checkpoint_id"] if saved.parent_config else None,
            saved.checkpoint["ts"],
        )
        for number, saved in enumerate(inputs[: len(texts)], 1)
    ]


def fork(store: Store, row: ThreadRow, new_id: str, at: int | None, why: str = "fork") -> ThreadRow:
    """A new thread from `row`'s latest state, or from just before its user message `at`,
    titled by `why` it was made ("fork", "undo": fork_title)."""
    title = fork_title(store, row.title, why)
    if at is None:
        return _anchored(store, store.copy(row, new_id, None, row.turns, title))
    known = turns(store, row.thread_id)
    if not 1 <= at <= len(known):
        raise UsageError(
            f"--at must be between 1 and {len(known)} (threads history {row.thread_id})"
        )
    fork_row = store.copy(row, new_id, known[at - 1].checkpoint_id or "", at - 1, title)
    messages = values(store, new_id).get("messages", [])
    store.update(new_id, messages=len(messages))
    return _anchored(store, fork_row)


_MARKED = re.compile(r"(?P<base>.*) \((?P<why>fork|undo) (?P<n>[0-9]{1,9})\)", re.DOTALL)


def fork_title(store: Store, title: str, why: str) -> str:
    """A fork's title: its source's, marked with why it was made and a number no thread
    with that title and mark has yet ("write notes.txt (undo 2)"), so `threads list` tells
    the forks apart. A source that is a fork itself keeps one mark: the next number."""
    found = _MARKED.fullmatch(title)
    base = found["base"] if found else title
    taken = [0]
    for other in store.recent(search=base):
        marked = _MARKED.fullmatch(other.title)
        if marked and marked["base"] == base and marked["why"] == why:
            taken.append(int(marked["n"]))
    return f"{base} ({why} {max(taken) + 1})"


def _anchored(store: Store, row: ThreadRow) -> ThreadRow:
    """The fork's copy of its parent's audit chain, anchored where the copy ends."""
    from agentcli.audit.anchor import advance
    from agentcli.threads.store_key import ApprovalKey

    audit = values(store, row.thread_id).get("audit", [])
    advance(store, ApprovalKey.of_store(store), row.thread_id, audit)
    return row
