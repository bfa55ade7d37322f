"""Every tool call of an answer has an id of its own before the answer is saved.

Some servers stream calls without ids (older llama.cpp builds, some vLLM tool parsers), or
give two calls of one answer the same id. A call without an id cannot be answered (a tool
message needs one: the run failed after the tool had run), and two calls under one id are
one call to the review, the journal, the order of the turn and the model's API. Such a call
gets a fresh id (`call_` and 24 hex digits), as does one whose id is not valid Unicode; the
review, the journal and the history all know it by that. Ids that servers repeat across
turns are left alone: the journal tells those apart by their task (review/cut_off_calls.py).
"""

from __future__ import annotations

import secrets
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage


def with_call_ids(reply: BaseMessage) -> BaseMessage:
    """`reply`, each of its calls (valid or not) with an id no other call of it has."""
    if not isinstance(reply, AIMessage) or not (reply.tool_calls or reply.invalid_tool_calls):
        return reply
    seen: set[str] = set()
    renamed = False

    def own(call_id: Any) -> str:
        nonlocal renamed
        if not (isinstance(call_id, str) and call_id and call_id not in seen and _utf8(call_id)):
            call_id, renamed = f"call_{secrets.token_hex(12)}", True
        seen.add(call_id)
        return call_id

    calls = [{**call, "id": own(call.get("id"))} for call in reply.tool_calls]
    invalid = [{**call, "id": own(call.get("id"))} for call in reply.invalid_tool_calls]
    if not renamed:
        return reply
    return reply.model_copy(update={"tool_calls": calls, "invalid_tool_calls": invalid})


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: no store or terminal takes it
        return False
    return True
