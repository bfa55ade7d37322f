"""Every use of LangGraph internals, in one place: a checkpointer that remembers what its last
run streamed, checkpoint decoding that remembers the messages it decoded, `langgraph dev`'s
state written out on demand, and the private names agentcli reads from LangGraph.

Recall. Each run starts by loading its thread: LangGraph rebuilds `messages` and `audit`
(DeltaChannels, agent/state.py) from their last full copy and every write since, a walk of up
to state.SNAPSHOT_EVERY updates that grows with the thread. The run before streamed those very
values with the id of its last checkpoint (the "checkpoints" stream mode); `remember` keeps
them, and the walk for that checkpoint is answered with them. A checkpoint never changes once
saved, so what is kept for its id stays true whoever writes after it; any other checkpoint is
walked as before.

CachingSerializer. Each turn of a long chat made the same pydantic messages from the same bytes
again; here a message is decoded once, then found by its bytes. Only messages are shared:
LangGraph and LangChain treat them as immutable (reducers replace one by id, agentcli uses
model_copy; LangGraph sets the id of a message without one, so those are not kept). Lists,
dicts and checkpoints are decoded every time. It hooks into JsonPlusSerializer's msgpack
extension hook: tests/unit/threads/test_langgraph_internals.py fails if a LangGraph upgrade
bypasses it.

persist_dev_state. The in-memory runtime of `langgraph dev` keeps threads, runs and
checkpoints in memory and writes them to its .langgraph_api folder every 10 s; the server's
call journal (server/call_journal.py) has it write them out before a tool call starts.

CONFIG_KEY_RUNTIME: where a running node finds its Runtime (agent/tools_node.py).
step_checkpoint: the checkpoint a running task's step started from (undo's records).
messages_delta_reducer: add_messages for a DeltaChannel (agent/state.py).
ERROR_CHANNEL: where LangGraph saves a failed task's exception (agent/secrets.py).
"""

from __future__ import annotations

import os
import pickle
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import ormsgpack
from langchain_core.messages import BaseMessage
from langgraph._internal._constants import (
    CONFIG_KEY_CHECKPOINT_MAP,
    CONFIG_KEY_RUNTIME,
    ERROR,
)
from langgraph.checkpoint.serde.jsonplus import EXT_DELTA_SNAPSHOT, JsonPlusSerializer
from langgraph.checkpoint.serde.types import _DeltaSnapshot
from langgraph.graph.message import _messages_delta_reducer

__all__ = [
    "CONFIG_KEY_RUNTIME",
    "ERROR_CHANNEL",
    "CachingSerializer",
    "Recall",
    "messages_delta_reducer",
    "persist_dev_state",
    "step_checkpoint",
]

# as add_messages, for a DeltaChannel: a message with a known id replaces it (beta in 1.2)
messages_delta_reducer = _messages_delta_reducer
ERROR_CHANNEL = ERROR  # the channel of a failed task's exception, saved with the checkpoint


class Recall:
    """Mixed into a LangGraph saver (SqliteSaver, PostgresSaver): before it in the bases."""

    _recalled: tuple[tuple[str, str, str], dict[str, Any]] | None = None

    def remember(self, config: Mapping[str, Any], values: Mapping[str, Any]) -> None:
        """The values of the checkpoint `config` names (a "checkpoints" stream part's)."""
        key = _key(config)
        if key is not None:  # copies: the reducers make new lists, but stay on the safe side
            kept = {k: list(v) for k, v in values.items() if isinstance(v, list)}
            self._recalled = (key, kept)

    def get_delta_channel_history(
        self, *, config: Mapping[str, Any], channels: Sequence[str]
    ) -> Mapping[str, Any]:
        recalled = self._recalled
        if recalled is not None and recalled[0] == _key(config):
            values = recalled[1]
            if all(channel in values for channel in channels):
                # the value at this checkpoint; its own pending writes LangGraph applies itself
                return {ch: {"seed": list(values[ch]), "writes": []} for ch in channels}
        return super().get_delta_channel_history(  # type: ignore[misc]
            config=config, channels=channels
        )


def step_checkpoint(config: Mapping[str, Any]) -> str | None:
    """The id of the checkpoint the running task's step started from: LangGraph gives a
    task the checkpoint of each enclosing namespace (the root's under "")."""
    found = config.get("configurable", {}).get(CONFIG_KEY_CHECKPOINT_MAP, {}).get("")
    return str(found) if found else None


def _key(config: Mapping[str, Any]) -> tuple[str, str, str] | None:
    conf = config.get("configurable") or {}
    checkpoint_id = conf.get("checkpoint_id")
    if not checkpoint_id:
        return None
    return (str(conf.get("thread_id")), str(conf.get("checkpoint_ns", "")), str(checkpoint_id))


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


_WRITING = threading.Lock()  # one writer of the snapshots in this process at a time
ATTEMPTS = 3  # a dict another thread changes while it is pickled is read again


def persist_dev_state() -> int:
    """Write `langgraph dev`'s in-memory state to disk now; the number of files written
    (0 under any other runtime: it registers none). Each file is replaced whole, as the
    runtime's own flush does, from a temporary file of agentcli's own name so the two
    writers never share one."""
    try:
        from langgraph_runtime_inmem import _persistence
    except ImportError:
        return 0
    stores: dict[str, Any] = getattr(_persistence, "_stores", {})
    written = 0
    with _WRITING:
        for ref in list(stores.values()):  # registration order: the runtime's own
            data = ref()
            if data is not None and getattr(data, "flag", "c") != "r":
                _write(data.filename, data)
                written += 1
    return written


def _write(filename: str, data: dict[Any, Any]) -> None:
    temporary = f"{filename}.agentcli.tmp"
    for attempt in range(ATTEMPTS):
        try:
            payload = pickle.dumps(dict(data), 2)  # the runtime's own format
            break
        except RuntimeError:  # changed while read (another thread's step): read again
            if attempt == ATTEMPTS - 1:
                raise
    with open(temporary, "wb") as out:
        out.write(payload)
        out.flush()
        os.fsync(out.fileno())
    os.replace(temporary, filename)
