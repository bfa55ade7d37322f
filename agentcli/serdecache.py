"""Checkpoint decoding that remembers the messages it decoded, for a long-lived process.

Each run loads its thread: LangGraph rebuilds `messages` from its last full copy and every
write since (state.SNAPSHOT_EVERY), so each turn of a 300-turn chat made the same pydantic
messages from the same bytes again (~20 ms). Here a message is decoded once, then found by
its bytes. Only messages are shared: LangGraph and LangChain treat them as immutable
(reducers replace one by id, agentcli uses model_copy; LangGraph sets the id of a message
without one, so those are not kept). Lists, dicts and checkpoints are decoded every time.
Hooks into JsonPlusSerializer's msgpack extension hook: tests/unit/test_serdecache.py
fails if a LangGraph upgrade bypasses it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import ormsgpack
from langchain_core.messages import BaseMessage
from langgraph.checkpoint.serde.jsonplus import EXT_DELTA_SNAPSHOT, JsonPlusSerializer
from langgraph.checkpoint.serde.types import _DeltaSnapshot

MAX_BYTES = 64 * 1024 * 1024  # of encoded messages; decoded, they take a few times that


class CachingSerializer(JsonPlusSerializer):
    """LangGraph's serializer, looking decoded messages up in a least-recently-used cache."""

    def __init__(self, max_bytes: int = MAX_BYTES, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.max_bytes = max_bytes
        self._use_cache()

    def with_msgpack_allowlist(self, extra_allowlist: Any) -> JsonPlusSerializer:
        # compiling a graph may derive a stricter copy: its own hook, so its own cache
        clone = super().with_msgpack_allowlist(extra_allowlist)
        if clone is not self and isinstance(clone, CachingSerializer):
            clone._use_cache()
        return clone

    def _use_cache(self) -> None:
        self._cache: OrderedDict[tuple[int, bytes], BaseMessage] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()  # runs load in worker threads, commands in the main one
        self._unpack_ext_hook = self._cached(self._unpack_ext_hook)

    def _cached(self, decode: Callable[[int, bytes], Any]) -> Callable[[int, bytes], Any]:
        def hook(code: int, data: bytes) -> Any:
            if code == EXT_DELTA_SNAPSHOT:  # a channel's full copy: its messages through here
                return _DeltaSnapshot(
                    ormsgpack.unpackb(data, ext_hook=hook, option=ormsgpack.OPT_NON_STR_KEYS)
                )
            key = (code, data)
            with self._lock:
                if (hit := self._cache.get(key)) is not None:
                    self._cache.move_to_end(key)
                    return hit
            value = decode(code, data)
            if isinstance(value, BaseMessage) and value.id is not None:
                with self._lock:
                    if key not in self._cache:
                        self._cache[key] = value
                        self._bytes += len(data)
                    while self._bytes > self.max_bytes:
                        self._bytes -= len(self._cache.popitem(last=False)[0][1])
            return value

        return hook
