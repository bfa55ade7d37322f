"""What agentcli builds on LangGraph's internals (threads/langgraph_internals.py).

Recall: the next run's load answered from what the last run streamed; the state must be
exactly what the walk over the saved writes gives. CachingSerializer: the checkpoint decode
cache gives equal values, shares nothing mutable, and is bounded."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.serde.types import _DeltaSnapshot

from agentcli.config import Settings
from agentcli.policy.approval_policy import Policy
from agentcli.session.local import Session
from agentcli.threads.backends import open_store
from agentcli.threads.langgraph_internals import CachingSerializer, Recall
from agentcli.threads.sqlite_backend import SqliteStore
from tests.helpers.fakes import call, say


def fresh_values(s: Session, database: str) -> dict[str, Any]:
    """The thread's state read by another store, which has nothing to recall."""
    settings = Settings(db=database)
    other = Session(settings, open_store(settings), Policy(), tools=list(s.tools.values()))
    other.thread_id = s.thread_id
    values = other.state().values
    other.store.close()
    return values


@pytest.mark.backends
def test_recalled_state_is_the_saved_state(make, database: str) -> None:
    replies = [
        call(("note", {"text": "a"})),
        say("noted"),
        say("plain answer"),
        call(("note", {"text": "b"}), ("peek", {"path": "x"})),
        say("both"),
    ]
    s = make(replies, Policy.build(allow=["note"]))
    list(s.send("first"))
    list(s.send("second"))
    events = list(s.send("third"))  # peek waits for review: a run that ends at an interrupt
    assert events[-1].status == "awaiting_approval"
    saver = s.store.saver
    assert isinstance(saver, Recall)
    latest = saver.get_tuple(s.config)
    history = saver.get_delta_channel_history(config=latest.config, channels=["messages"])
    assert history["messages"]["writes"] == []  # recalled, not walked
    assert s.state().values == fresh_values(s, database)
    done = list(
        s.decide([{"type": "edit", "edited_action": {"name": "peek", "args": {"path": "y"}}}])
    )
    assert done[-1].status == "done"
    assert s.state().values == fresh_values(s, database)
    messages = s.state().values["messages"]
    assert [m.type for m in messages].count("human") == 3 and messages[-1].content == "both"


def test_any_other_checkpoint_is_walked(make) -> None:
    s = make([say("one"), say("two")])
    list(s.send("a"))
    first = s.store.saver.get_tuple(s.config).config
    list(s.send("b"))
    saver = s.store.saver
    assert (
        saver._recalled is not None
        and saver._recalled[0][2] != first["configurable"]["checkpoint_id"]
    )
    older = [m.content for m in s.graph.get_state(first).values["messages"]]
    assert older == ["a", "one"]


@pytest.mark.backends
def test_a_run_loads_its_thread_without_a_walk(make, monkeypatch: pytest.MonkeyPatch) -> None:
    s = make(
        [say("one"), call(("note", {"text": "x"})), say("two"), say("three")],
        Policy.build(auto_approve=True),
    )
    list(s.send("a"))  # a new thread: nothing to walk yet
    walks: list[Any] = []
    base = type(s.store.saver).__bases__[1]  # SqliteSaver or PostgresSaver
    original = base.get_delta_channel_history

    def counted(self: Any, **kwargs: Any) -> Any:
        walks.append(kwargs["config"]["configurable"].get("checkpoint_id"))
        return original(self, **kwargs)

    monkeypatch.setattr(base, "get_delta_channel_history", counted)
    list(s.send("b"))
    list(s.send("c"))
    assert walks == []
    assert [m.content for m in s.state().values["messages"] if m.type != "tool"] == [
        "a",
        "one",
        "b",
        "",
        "two",
        "c",
        "three",
    ]


def messages(n: int) -> list:
    return [
        HumanMessage(f"question {n}", id=f"h{n}"),
        AIMessage("", id=f"a{n}", tool_calls=[{"name": "t", "args": {"n": n}, "id": f"c{n}"}]),
        ToolMessage(f"result {n}", tool_call_id=f"c{n}", id=f"t{n}"),
    ]


def test_messages_are_decoded_once_and_their_list_every_time() -> None:
    serde = CachingSerializer()
    data = serde.dumps_typed(messages(1))
    first, second = serde.loads_typed(data), serde.loads_typed(data)
    assert first == second == messages(1)
    assert first is not second and all(a is b for a, b in zip(first, second, strict=True))
    first.append(HumanMessage("mine"))
    assert serde.loads_typed(data) == messages(1)


def test_a_checkpoint_is_a_new_dict_with_the_same_messages() -> None:
    serde = CachingSerializer()
    checkpoint = {"channel_values": {"messages": _DeltaSnapshot(messages(1))}, "v": 4}
    data = serde.dumps_typed(checkpoint)
    first, second = serde.loads_typed(data), serde.loads_typed(data)
    assert first == second == JsonPlusSerializer().loads_typed(data)
    assert first is not second and first["channel_values"] is not second["channel_values"]
    seed, again = (c["channel_values"]["messages"].value for c in (first, second))
    assert seed == messages(1) and seed is not again and seed[0] is again[0]
    # the same message written later (a DeltaChannel write) is the decoded one too
    assert serde.loads_typed(serde.dumps_typed(messages(1)[:1]))[0] is seed[0]


def test_values_other_than_messages_are_decoded_every_time() -> None:
    serde = CachingSerializer()
    for value in ({"audit": [{"tool": "t"}]}, [{"call_id": "c"}], {"checkpoint": 1}):
        data = serde.dumps_typed(value)
        first = serde.loads_typed(data)
        assert first == value and serde.loads_typed(data) is not first
    anonymous = serde.dumps_typed([HumanMessage("no id yet")])  # LangGraph may set its id
    assert serde.loads_typed(anonymous)[0] is not serde.loads_typed(anonymous)[0]
    assert serde.loads_typed(serde.dumps_typed(None)) is None
    assert len(serde._cache) == 0


def test_the_cache_is_bounded_least_recent_out() -> None:
    blobs = [CachingSerializer().dumps_typed(messages(n)) for n in range(50)]
    serde = CachingSerializer(max_bytes=10 * len(blobs[0][1]))
    oldest = serde.loads_typed(blobs[0])
    for blob in blobs[1:]:
        serde.loads_typed(blob)
        assert 0 < serde._bytes <= serde.max_bytes
    assert len(serde._cache) < 3 * 12  # 10 lists of 3 messages, give or take the lists
    again = serde.loads_typed(blobs[0])
    assert again == oldest and again[0] is not oldest[0]  # decoded anew
    assert serde.loads_typed(blobs[-1])[0] is serde.loads_typed(blobs[-1])[0]


def test_a_stricter_copy_does_not_share_the_cache() -> None:
    serde = CachingSerializer(allowed_msgpack_modules=[("json", "JSONDecoder")])
    data = serde.dumps_typed(messages(1))
    serde.loads_typed(data)
    strict = serde.with_msgpack_allowlist([("decimal", "Decimal")])
    assert isinstance(strict, CachingSerializer) and strict is not serde
    assert len(strict._cache) == 0 and len(serde._cache) == 3
    assert strict.loads_typed(data) == messages(1) and len(strict._cache) == 3


def test_the_checkpointer_decodes_through_it(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "threads.db")
    assert isinstance(store.saver.serde.serde, CachingSerializer)  # inside the compression
    store.close()
