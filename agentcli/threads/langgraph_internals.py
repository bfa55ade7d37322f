"""Every use of LangGraph's internals, in one place. An upgrade of langgraph,
langgraph-checkpoint, its savers or langgraph-runtime-inmem may move any of them: they are
capped at the minor version tested (pyproject.toml), and tests/unit/threads/
test_langgraph_upgrade.py checks each by name ("langgraph internal X moved") and keeps
every other module off them.

Recall. Each run starts by loading its thread: LangGraph rebuilds `messages` and `audit`
(DeltaChannels, agent/state.py) from their last full copy and every write since, a walk of up
to state.SNAPSHOT_EVERY updates that grows with the thread (the savers'
`get_delta_channel_history`, beta in 1.2). The run before streamed those very values with the
id of its last checkpoint (the "checkpoints" stream mode); `remember` keeps them, and the walk
for that checkpoint is answered with them. A checkpoint never changes once saved, so what is
kept for its id stays true whoever writes after it; any other checkpoint is walked as before.

CachingSerializer. Each turn of a long chat made the same pydantic messages from the same bytes
again; here a message is decoded once, then found by its bytes. Only messages are shared:
LangGraph and LangChain treat them as immutable (reducers replace one by id, agentcli uses
model_copy; LangGraph sets the id of a message without one, so those are not kept). Lists,
dicts and checkpoints are decoded every time. It hooks into JsonPlusSerializer's msgpack
extension hook (`_unpack_ext_hook`, and the `_DeltaSnapshot` of a full copy).

checkpoint_serializer: CachingSerializer, what it writes compressed (threads/compression.py),
through LangGraph's EncryptedSerializer: the one wrapper compiling a graph derives a strict
msgpack allowlist through. rewrite_writes: put_writes wrapped; LangGraph reads its signature
and passes `task_path` (which orders parallel tasks' writes on reload) only if it is named.
FORK_CHAIN_SQL, fork_tables: the savers' own tables, whose rows a fork copies
(threads/thread_fork.py): LangGraph's savers have no copy_thread.

persist_dev_state. The in-memory runtime of `langgraph dev` keeps threads, runs and
checkpoints in memory and writes them to its .langgraph_api folder every 10 s; the server's
call journal (server/server_journal.py) has it write them out before a tool call starts. It
reads `_persistence._stores` (the runtime's registry of what it writes) and
`checkpoint.MEMORY` (its checkpointer, which that registry loses: see persist_dev_state).

The private names: `with_runtime` (where a running node finds its Runtime, agent/tools_node.py),
`step_checkpoint` (the checkpoint a running task's step started from: undo's records),
`messages_delta_reducer` (add_messages for a DeltaChannel, agent/state.py), ERROR_CHANNEL
(where LangGraph saves a failed task's exception, agent/secrets.py), INTERRUPT (the key of
interrupts in an "updates" stream part, session/stream_events.py).
"""

from __future__ import annotations

import os
import pickle
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import ormsgpack
from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig
from langgraph._internal._constants import (
    CONFIG_KEY_CHECKPOINT_MAP,
    CONFIG_KEY_RUNTIME,
    ERROR,
)
from langgraph._internal._constants import INTERRUPT as _INTERRUPT
from langgraph.checkpoint.serde.encrypted import EncryptedSerializer
from langgraph.checkpoint.serde.jsonplus import EXT_DELTA_SNAPSHOT, JsonPlusSerializer
from langgraph.checkpoint.serde.types import _DeltaSnapshot
from langgraph.graph.message import _messages_delta_reducer

from agentcli.threads.compression import Zlib

__all__ = [
    "ERROR_CHANNEL",
    "FORK_CHAIN_SQL",
    "INTERRUPT",
    "CachingSerializer",
    "Recall",
    "checkpoint_serializer",
    "fork_tables",
    "messages_delta_reducer",
    "persist_dev_state",
    "rewrite_writes",
    "step_checkpoint",
    "with_runtime",
]

# as add_messages, for a DeltaChannel: a message with a known id replaces it (beta in 1.2)
messages_delta_reducer = _messages_delta_reducer
ERROR_CHANNEL = ERROR  # the channel of a failed task's exception, saved with the checkpoint
INTERRUPT = _INTERRUPT  # an "updates" stream part's key for the interrupts of the step
Writes = Sequence[tuple[str, Any]]


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


def with_runtime(config: RunnableConfig, runtime: Any) -> RunnableConfig:
    """`config` whose nodes and tools find `runtime` as theirs."""
    configurable = {**config.get("configurable", {}), CONFIG_KEY_RUNTIME: runtime}
    return {**config, "configurable": configurable}


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


def rewrite_writes(saver: Any, rewrite: Callable[[Writes], list[tuple[str, Any]]]) -> None:
    """Make `saver` store each task's writes as `rewrite` returns them."""
    put_writes, aput_writes = saver.put_writes, saver.aput_writes

    def put(config: Any, writes: Writes, task_id: str, task_path: str = "") -> Any:
        return put_writes(config, rewrite(writes), task_id, task_path)

    async def aput(config: Any, writes: Writes, task_id: str, task_path: str = "") -> Any:
        return await aput_writes(config, rewrite(writes), task_id, task_path)

    saver.put_writes, saver.aput_writes = put, aput


# A fork's chain: the fork point and its ancestors, by parent links (not by id order), into
# agentcli_chain; then each table's rows of the thread that a fork up to that point keeps
FORK_CHAIN_SQL = (
    "WITH RECURSIVE chain(id) AS (SELECT CAST(? AS TEXT) UNION SELECT c.parent_checkpoint_id"
    " FROM checkpoints c JOIN chain ON c.checkpoint_id = chain.id"
    " WHERE c.thread_id = ? AND c.checkpoint_ns = '' AND c.parent_checkpoint_id"
    " IS NOT NULL) INSERT INTO agentcli_chain SELECT id FROM chain"
)
_IN_CHAIN = " AND checkpoint_id IN (SELECT id FROM agentcli_chain)"
# PostgresSaver keeps channel values apart, keyed by channel and version: those the chain's
# checkpoints point at
_BLOBS_OF_CHAIN = (
    " AND (checkpoint_ns, channel, version) IN (SELECT c.checkpoint_ns, v.key, v.value"
    " FROM checkpoints c, jsonb_each_text(c.checkpoint -> 'channel_versions') v"
    " WHERE c.thread_id = checkpoint_blobs.thread_id"
    " AND c.checkpoint_id IN (SELECT id FROM agentcli_chain))"
)
_TABLES = {
    "sqlite": {"checkpoints": _IN_CHAIN, "writes": _IN_CHAIN},
    "postgres": {
        "checkpoints": _IN_CHAIN,
        "checkpoint_writes": _IN_CHAIN,
        "checkpoint_blobs": _BLOBS_OF_CHAIN,
    },
}


def fork_tables(saver: str) -> dict[str, str]:
    """The tables of a saver ("sqlite", "postgres") and, for each, the condition (after
    "WHERE thread_id = ?") of the rows a fork up to the chain in agentcli_chain keeps."""
    return _TABLES[saver]


def checkpoint_serializer() -> EncryptedSerializer:
    """What the savers store values with: messages decoded once, everything compressed."""
    return EncryptedSerializer(Zlib(), CachingSerializer())


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
    runtime's own flush does, from a temporary file named for agentcli and this process, so
    that neither the runtime's flush nor another process writing the same folder shares it.

    The runtime's checkpointer (`checkpoint.MEMORY`) is first registered again: each
    `Checkpointer(unpack_hook=...)` the API makes registers a throwaway saver's dicts under
    the same file names, then hands that saver MEMORY's, so the registry keeps only the
    throwaway ones (stale copies, dead once collected). Until put back, neither this write
    nor the runtime's flush every 10 s wrote the checkpoints at all."""
    try:
        from langgraph_runtime_inmem import _persistence, checkpoint
    except ImportError:
        return 0
    stores: dict[str, Any] = getattr(_persistence, "_stores", {})
    memory = getattr(checkpoint, "MEMORY", None)
    written = 0
    with _WRITING:
        for data in _checkpoint_dicts(memory):
            stores[data.filename] = weakref.ref(data)  # the registry is the runtime's own
        for ref in list(stores.values()):  # registration order: the runtime's own
            data = ref()
            if data is not None and getattr(data, "flag", "c") != "r":
                _write(data.filename, data)
                written += 1
    return written


def _checkpoint_dicts(memory: Any) -> list[Any]:
    """The runtime saver's own persistent dicts (none before it is made)."""
    found = (getattr(memory, name, None) for name in ("storage", "writes", "blobs"))
    return [data for data in found if isinstance(getattr(data, "filename", None), str)]


def _write(filename: str, data: dict[Any, Any]) -> None:
    temporary = f"{filename}.agentcli-{os.getpid()}.tmp"  # another process may share the folder
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
