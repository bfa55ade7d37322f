"""Every tool call of an answer has an id of its own, in a safe alphabet, before the answer
is saved.

Some servers stream calls without ids (older llama.cpp builds, some vLLM tool parsers), or
give two calls of one answer the same id. A call without an id cannot be answered (a tool
message needs one: the run failed after the tool had run), and two calls under one id are
one call to the review, the journal, the order of the turn and the model's API.

The id is the model's text, and a person reads it and types it back: `agentcli review`
names a call `CALL_ID@DIGEST`, so an id `call_1@<digest>` would make a call of one thread
read as a call of another; an id with spaces, controls, bidi or zero-width characters reads
as another id, and one with `$(...)` or `;` is a command when pasted into a shell. So an id
keeps only ASCII letters, digits, `_` and `-` (every other character becomes `_`; a `.`
too, which joins a plan's call id to its task numbers, plan_tool.task_call_ids), starts
with a letter, a digit or `_` (else `call_` goes before it), and is at most MAX_CHARS long.

A call without an id, one whose id another call of the answer has (before or after being
made safe), gets a fresh id (`call_` and 24 hex digits); the review, the journal and the
history all know it by that. Ids that servers repeat across turns are left alone: the
journal tells those apart by their task (review/cut_off_calls.py), a decision by the
digest. Answers saved before ids were made safe keep their ids (nothing here reads them).
"""

from __future__ import annotations

import re
import secrets
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage

MAX_CHARS = 64  # OpenAI's own ids are 24-40 characters, Mistral's 9
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
SAFE = re.compile(rf"[A-Za-z0-9_][A-Za-z0-9_-]{{0,{MAX_CHARS - 1}}}")


def safe_id(call_id: str) -> str:
    """`call_id` in the safe alphabet (unchanged if it is in it already)."""
    if SAFE.fullmatch(call_id):
        return call_id
    made = _UNSAFE.sub("_", call_id)
    if not SAFE.fullmatch(made[:1]):
        made = f"call_{made}"
    return made[:MAX_CHARS]


def fresh_id() -> str:
    return f"call_{secrets.token_hex(12)}"


def with_call_ids(reply: BaseMessage) -> BaseMessage:
    """`reply`, each of its calls (valid or not) with a safe id no other call of it has."""
    if not isinstance(reply, AIMessage) or not (reply.tool_calls or reply.invalid_tool_calls):
        return reply
    seen: set[str] = set()
    renamed = False

    def own(call_id: Any) -> str:
        nonlocal renamed
        made = safe_id(call_id) if isinstance(call_id, str) and call_id else ""
        if not made or made in seen:
            made = fresh_id()
        renamed = renamed or made != call_id
        seen.add(made)
        return made

    calls = [{**call, "id": own(call.get("id"))} for call in reply.tool_calls]
    invalid = [{**call, "id": own(call.get("id"))} for call in reply.invalid_tool_calls]
    if not renamed:
        return reply
    return reply.model_copy(update={"tool_calls": calls, "invalid_tool_calls": invalid})
