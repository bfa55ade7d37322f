"""What agentcli stores in the checkpointer's tables, compressed with zlib.

A thread's checkpoints and writes are mostly text (messages, tool results) and the same
msgpack framing again and again; a DeltaChannel's full copy holds every message so far.
Compressed, a 300-turn tool-calling thread takes about half the bytes (bench/README.md,
"Issue 26: stored values compressed").

Most values are small (a checkpoint without a full copy is about 1 KB, a message a few
hundred bytes), too small for zlib to find their framing repeated inside them. So zlib
starts from a preset dictionary, FRAMING: the framing of a checkpoint, of LangChain's
messages, of a tool call sent to the tools node and of an audit record, with every value
left empty (nothing of a thread's own text). It is part of the stored format: a value
written with it reads only with it (zlib checks the dictionary's checksum and refuses
another), so it never changes; other framing gets a new encoding name.

`Zlib` is a cipher in LangGraph's sense (CipherProtocol: encrypt, decrypt): LangGraph's
EncryptedSerializer wraps the serializer with it (threads/langgraph_internals.py
`checkpoint_serializer`), so a value is stored with the type "msgpack+zlib-d1", or
"msgpack+plain" when it is too small to gain; a value saved before (plain "msgpack") is
read as it was.
"""

from __future__ import annotations

import zlib
from typing import Any

import ormsgpack

ZLIB = "zlib-d1"  # zlib, starting from FRAMING
PLAIN = "plain"
SMALLEST = 128  # bytes: below this, zlib's frame and tables cost about what they save
LEVEL = 6  # zlib's default: level 9 saves under 1% more here, for twice the time

_VERSION = "00000000000000000000000000000000.0.0000000000000000"  # as the savers write them
_MESSAGE = {"content": "", "additional_kwargs": {}, "response_metadata": {}}
_CALL = {"name": "", "args": {}, "id": "call_", "type": "tool_call"}
_SKELETONS: list[Any] = [  # the commonest last: zlib reaches nearer bytes more cheaply
    {  # an audit record (agent/audit/records.py)
        "call_id": "call_",
        "tool": "",
        "args": {},
        "decision": "approved",
        "who": "person",
        "by": "",
        "ran_args": {},
        "feedback": None,
        "at": "2026-01-01T00:00:00+00:00",
        "prev": "",
        "hash": "",
    },
    [  # a tool call sent to the tools node
        "langgraph.types",
        "Send",
        ["tools", {"__type": "tool_call_with_context", "tool_call": _CALL, "state": {}}],
    ],
    [
        "langchain_core.messages.human",
        "HumanMessage",
        {**_MESSAGE, "type": "human", "name": None, "id": ""},
        "model_validate_json",
    ],
    [
        "langchain_core.messages.tool",
        "ToolMessage",
        {**_MESSAGE, "type": "tool", "name": "", "id": "", "tool_call_id": "call_"}
        | {"artifact": None, "status": "success"},
        "model_validate_json",
    ],
    [
        "langchain_core.messages.ai",
        "AIMessage",
        {**_MESSAGE, "type": "ai", "name": None, "id": "lc_run--", "tool_calls": [_CALL]}
        | {"invalid_tool_calls": [], "usage_metadata": {"input_tokens": 0, "output_tokens": 0}},
        "model_validate_json",
    ],
    {  # a checkpoint
        "v": 4,
        "ts": "2026-01-01T00:00:00.000000+00:00",
        "id": "00000000-0000-0000-0000-000000000000",
        "channel_values": {"invalid_turns": 0, "__start__": {"messages": []}, "__pregel_tasks": []},
        "channel_versions": {
            channel: _VERSION
            for channel in ("__start__", "messages", "invalid_turns", "audit")
            + ("branch:to:agent", "branch:to:review", "__pregel_tasks")
        },
        "versions_seen": {
            "__input__": {},
            "__start__": {"__start__": _VERSION},
            "agent": {"branch:to:agent": _VERSION},
            "review": {"branch:to:review": _VERSION},
            "tools": {},
        },
        "updated_channels": ["messages"],
    },
]
FRAMING = b"".join(ormsgpack.packb(skeleton) for skeleton in _SKELETONS)


class Zlib:
    """Compresses a serialized value when that makes it smaller."""

    def encrypt(self, plaintext: bytes) -> tuple[str, bytes]:
        if len(plaintext) >= SMALLEST:
            packer = zlib.compressobj(LEVEL, zdict=FRAMING)
            packed = packer.compress(plaintext) + packer.flush()
            if len(packed) < len(plaintext):
                return ZLIB, packed
        return PLAIN, plaintext

    def decrypt(self, ciphername: str, ciphertext: bytes) -> bytes:
        if ciphername == ZLIB:
            unpacker = zlib.decompressobj(zdict=FRAMING)
            return unpacker.decompress(ciphertext) + unpacker.flush()
        if ciphername == PLAIN:
            return ciphertext
        raise ValueError(f"a stored value in an unknown encoding: {ciphername!r}")
