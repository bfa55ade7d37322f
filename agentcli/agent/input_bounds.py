"""How much any client may put into a thread: messages clipped, edits bounded.

A LangGraph Server client (the SDK, Agent Chat UI, Studio, curl) writes messages straight
into the state, and answers a review with any text; so does the CLI with `--message`, `-`
or feedback. Unbounded, a 5 MB message went to the model whole and grew the thread's
state by twice that. So every message that enters the `messages` channel passes through
`bounded` (the channel's reducer, agent/state.py), whoever wrote it:

- a message's text (a string, or the text parts of a list of content parts) is clipped to
  MAX_MESSAGE_BYTES of UTF-8 for a person's messages (human, system) and to
  MAX_STORED_BYTES for the rest (answers, tool results, a client's own tool messages); the
  clipped text ends with a note saying so, which the model reads and the person sees;
- a content part that is not text (an image, a nested JSON value) counts its JSON size,
  and one that does not fit (or cannot be measured: nested too deep) becomes a line that
  says what was dropped;
- its other fields (extra kwargs, metadata, artifact, name, ids) are bounded too: an
  oversized one is dropped or cut.

A review's answer is bounded where it is read (review/answers.py): a reject message or
feedback is clipped like a person's message, a `who`/`by` to MAX_LABEL_CHARS, and an edit
whose arguments are over MAX_EDIT_BYTES as JSON is refused (cutting arguments would change
what runs). Clipping twice changes nothing: a clipped text is within its bound.
"""

from __future__ import annotations

import codecs
import json
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

MAX_MESSAGE_BYTES = 500_000  # a person's message (attached files too), feedback, a reason
MAX_STORED_BYTES = 1_000_000  # any other message: a model's answer, a tool's result
MAX_EDIT_BYTES = 1_000_000  # an edit's arguments, as JSON
MAX_LABEL_CHARS = 200  # a name, an id, a `who`/`by`
NOTE_ROOM = 400  # bytes kept for the note and a dropped part's line
PART_OVERHEAD = 32  # bytes of JSON around a text part's text: {"type": "text", "text": ""}
Reducer = Callable[[Any, Sequence[Any]], Any]


def clipped(text: str, limit: int = MAX_MESSAGE_BYTES) -> str:
    """`text` if its UTF-8 is within `limit` bytes, else its start and a note that says so."""
    if len(text) * 4 <= limit:  # fast: no character takes more than 4 bytes
        return text
    size = _bytes(text)
    if size <= limit:
        return text
    return _cut(text, limit - NOTE_ROOM) + note(size, limit)


def note(size: int | None, limit: int) -> str:
    """What the model reads (and the person sees) after a clipped text: `size` None when the
    whole could not be measured."""
    of = f" of {size:,}" if size is not None else ""
    return f"\n\n[agentcli: this message was clipped to {limit:,} bytes{of}: the rest was dropped]"


def json_size(value: Any) -> int | None:
    """The UTF-8 size of `value` as JSON; None when it cannot be written (nested too deep,
    not JSON)."""
    try:
        return _bytes(json.dumps(value, ensure_ascii=False, default=str))
    except (RecursionError, ValueError, TypeError):
        return None


def bounded_reducer(reducer: Reducer) -> Reducer:
    """`reducer` (add_messages for a DeltaChannel) over writes whose messages are bounded."""

    def reduce(state: Any, writes: Sequence[Any]) -> Any:
        return reducer(state, [_bounded_write(write) for write in writes])

    return reduce


def _bounded_write(write: Any) -> Any:
    if isinstance(write, list | tuple):
        return [bounded(item) for item in write]
    return bounded(write)


def bounded(message: Any) -> Any:
    """A message (object, or a client's dict) within its bounds; anything else as it is."""
    if isinstance(message, BaseMessage):
        limit = MAX_MESSAGE_BYTES if isinstance(message, HumanMessage | SystemMessage) else 0
        fields = _bounded_fields(message.model_dump(), limit or MAX_STORED_BYTES)
        return message if fields is None else message.model_copy(update=fields)
    if isinstance(message, dict):
        kind = str(message.get("type") or message.get("role") or "")
        person = kind in ("human", "user", "system", "developer")
        fields = _bounded_fields(message, MAX_MESSAGE_BYTES if person else MAX_STORED_BYTES)
        return message if fields is None else {**message, **fields}
    if isinstance(message, str):  # a bare string is a person's message
        return clipped(message)
    return message


def _bounded_fields(fields: dict[str, Any], limit: int) -> dict[str, Any] | None:
    """The fields of a message that must change to be within `limit`, or None."""
    changed: dict[str, Any] = {}
    content = fields.get("content")
    if isinstance(content, str):
        if (text := clipped(content, limit)) is not content:
            changed["content"] = text
    elif isinstance(content, list):
        if (parts := _bounded_parts(content, limit)) is not content:
            changed["content"] = parts
    elif content is not None:  # neither text nor parts: as text, bounded
        changed["content"] = clipped(str(content)[: limit + 1], limit)
    for key in ("additional_kwargs", "response_metadata", "artifact"):
        value = fields.get(key)
        if value and (json_size(value) or limit + 1) > limit:
            changed[key] = None if key == "artifact" else {}
    for key in ("name", "tool_call_id", "id"):
        value = fields.get(key)
        if isinstance(value, str) and len(value) > MAX_LABEL_CHARS:
            changed[key] = str(uuid.uuid4()) if key == "id" else value[:MAX_LABEL_CHARS]
    return changed or None


def _bounded_parts(parts: list[Any], limit: int) -> list[Any]:
    """Content parts within `limit` bytes: the first that does not fit is cut (a text) or
    named (anything else), and the rest are dropped; `parts` itself when all fit."""
    sizes = [_part_size(part) for part in parts]
    if all(size is not None for size in sizes) and sum(sizes) <= limit:  # type: ignore[arg-type]
        return parts
    room, kept = limit - NOTE_ROOM, []
    for part, size in zip(parts, sizes, strict=True):
        if size is not None and size <= room:
            kept.append(part)
            room -= size
            continue
        text = _part_text(part)
        if text is not None and room > 0:
            kept.append({"type": "text", "text": _cut(text, room)})
        else:
            kind = str(part.get("type") if isinstance(part, dict) else type(part).__name__)
            kept.append({"type": "text", "text": f"[a {kind[:40]!r} part was dropped]"})
        break
    total = None if None in sizes else sum(sizes)  # type: ignore[arg-type]
    kept.append({"type": "text", "text": note(total, limit).strip()})
    return kept


def _part_size(part: Any) -> int | None:
    """A text's bytes and its part's JSON around it (a string, or a part with `type` and
    `text` alone), else its JSON's: a million empty parts are not nothing."""
    if isinstance(part, str):
        return _bytes(part) + PART_OVERHEAD
    if _part_text(part) is not None and set(part) == {"type", "text"}:
        return _bytes(part["text"]) + PART_OVERHEAD
    return json_size(part)


def _part_text(part: Any) -> str | None:
    if isinstance(part, str):
        return part
    if isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str):
        return part["text"]
    return None


def _bytes(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def _cut(text: str, limit: int) -> str:
    """The longest start of `text` within `limit` bytes of UTF-8, never half a character."""
    data = text.encode("utf-8", "surrogatepass")[: max(limit, 0)]
    # an incremental decoder keeps a character cut in two for more bytes that never come
    return codecs.getincrementaldecoder("utf-8")("surrogatepass").decode(data, final=False)
