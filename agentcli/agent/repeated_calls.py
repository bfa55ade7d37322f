"""A model that makes the same call again and again in one turn (seen: a 135M model asked
to "say hello" listing the folder and searching it in turn until max_steps).

The same call: the same tool with the same arguments (equal as JSON values) and the same
outcome: for a call that succeeded, the same result text (what it read has not changed:
the model learned nothing new); for one that failed, any failure (an error's text may
name a time or a temporary path). A call that may change the workspace (any tool but the
reads, the calculator and fetch_url), other than the one counted, starts every count
again: re-running the tests after each edit is work, not a loop, even when they fail the
same way each time.

When one call has been made `[agent] max_repeated_calls` times (default 3) in a turn, the
model is told so with that call's result (as it is sent; the thread keeps the result as
the tool gave it), once: it can change course. The next call that reaches the count ends
the turn, before max_steps, and the person is told which call and how often
(session/stream_events.stop_reason). 0 turns the check off. A new message starts a new
turn, with no count.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from agentcli.policy.approval_modes import PURE, READS

UNCHANGING = READS | PURE | {"fetch_url"}  # calls that leave the workspace as it was
ARGS_SHOWN = 80  # characters of a call's arguments in the line the person reads


@dataclass(frozen=True)
class Repeat:
    """A call made `times` times in the turn, with the same outcome, nothing changed."""

    call_id: str  # this time's: the result that carries the model's note
    name: str
    args: Any
    times: int

    def note(self) -> str:
        """What the model reads after this call's result."""
        return (
            f"[agentcli: this is the same call for the {self.times}th time in this turn"
            f" ({self.name}, the same arguments, the same result; nothing changed in"
            " between). Do not make it again: use what you have, try something else, or"
            " answer the user. Repeating a call once more ends the turn.]"
        )

    def said(self) -> str:
        """`list_dir {"path": "."} 4 times`, for the person."""
        args = json.dumps(self.args, ensure_ascii=False)
        args = args if len(args) <= ARGS_SHOWN else args[: ARGS_SHOWN - 1] + "…"
        return f"{self.name} {args} {self.times} times"


def repeats(messages: Sequence[BaseMessage], limit: int) -> list[Repeat]:
    """Each call of the current turn (since the last user message) that was the same call
    for the `limit`th time or more, in order; none when `limit` is 0."""
    if limit <= 0:
        return []
    start = next(
        (i + 1 for i in range(len(messages) - 1, -1, -1) if isinstance(messages[i], HumanMessage)),
        0,
    )
    turn = messages[start:]
    results = {m.tool_call_id: m for m in turn if isinstance(m, ToolMessage)}
    # [(tool, outcome, args), times]: compared with ==, never serialised (a write's
    # arguments may be megabytes, and this runs at every step)
    counts: list[tuple[tuple[str, str, Any], int]] = []
    found: list[Repeat] = []
    for message in turn:
        if not isinstance(message, AIMessage):
            continue
        for call in message.tool_calls:
            result = results.get(call.get("id") or "")
            if result is None:  # not run yet (waiting at a review, or refused unsent)
                continue
            outcome = "(failed)" if result.status == "error" else result.text
            key = (call["name"], outcome, call["args"])
            times = next((n for seen, n in counts if seen == key), 0) + 1
            if call["name"] not in UNCHANGING:  # the workspace may differ from now on
                counts = []
            counts = [(seen, n) for seen, n in counts if seen != key] + [(key, times)]
            if times >= limit:
                found.append(Repeat(result.tool_call_id, call["name"], call["args"], times))
    return found


def with_note(request: list[BaseMessage], found: Sequence[Repeat]) -> list[BaseMessage]:
    """The request with the first repeat's note after its result: the model is told once."""
    if not found:
        return request
    first = found[0]
    return [
        message.model_copy(update={"content": f"{message.text}\n\n{first.note()}"})
        if isinstance(message, ToolMessage) and message.tool_call_id == first.call_id
        else message
        for message in request
    ]


def stopped_by(found: Sequence[Repeat]) -> Repeat | None:
    """The repeat that ends the turn: one after the model was told."""
    return found[1] if len(found) > 1 else None
