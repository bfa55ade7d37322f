"""The checkpoint decode cache: equal values, nothing mutable shared, bounded."""

from __future__ import annotations

from pathlib import Path

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.serde.types import _DeltaSnapshot

from agentcli.threads.langgraph_internals import CachingSerializer
from agentcli.threads.sqlite_backend import SqliteStore


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
    assert isinstance(store.saver.serde, CachingSerializer)
    store.close()
