"""Calls whose arguments can be stored, sealed and shown, or else invalid calls.

A model's arguments are JSON, which allows what agentcli cannot keep: an integer beyond 64
bits (the checkpointer's msgpack refuses it, and the run failed with the answer lost) and
text holding a lone UTF-16 surrogate (`"\\ud800"`: it cannot be written as UTF-8, and the
run failed after the review). Such a call becomes an invalid call before the answer is
saved: the model is told why, as for arguments that are not JSON, and nothing runs.
"""

from __future__ import annotations

import json
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage

INT_RANGE = (-(2**63), 2**64 - 1)  # what msgpack stores
UNKEPT = "arguments agentcli cannot keep: "  # how such a call's error starts


def with_storable_args(reply: BaseMessage) -> BaseMessage:
    """`reply`, each call whose arguments cannot be stored moved to its invalid calls."""
    if not isinstance(reply, AIMessage) or not reply.tool_calls:
        return reply
    kept, invalid = [], list(reply.invalid_tool_calls)
    for call in reply.tool_calls:
        problem = _unstorable([call.get("name"), call.get("args")])
        if problem is None:
            kept.append(call)
            continue
        invalid.append(
            {
                "type": "invalid_tool_call",
                "id": call.get("id"),
                "name": str(call.get("name")).encode("utf-8", "backslashreplace").decode(),
                "args": json.dumps(call.get("args"), ensure_ascii=True),
                "error": UNKEPT + problem,
            }
        )
    if len(kept) == len(reply.tool_calls):
        return reply
    return reply.model_copy(update={"tool_calls": kept, "invalid_tool_calls": invalid})


def _unstorable(value: Any) -> str | None:
    """Why `value` (parsed JSON) cannot be stored, or None."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, bool) or item is None or isinstance(item, float):
            continue
        if isinstance(item, int):
            if not INT_RANGE[0] <= item <= INT_RANGE[1]:
                return f"an integer beyond 64 bits ({str(item)[:20]}...) cannot be kept"
        elif isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return "text with a lone UTF-16 surrogate (such as \\ud800) is not valid Unicode"
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return None
