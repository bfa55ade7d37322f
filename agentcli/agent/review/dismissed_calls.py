"""Calls that left their review without a decision: recorded, and the model told they did
not run.

A client other than agentcli can walk away from a pending review. Agent Chat UI's "Mark as
resolved" sends `Command(goto="__end__")`; a message typed while a review waits makes it
add a ToolMessage "Successfully handled tool call." for each waiting call itself, and the
new input makes LangGraph drop the waiting `approve` task. Without this, the model would
read that a call succeeded which never ran, and the audit would have no entry for it.

The agent node calls `reconcile` before it asks the model: every call of the last model
turn that was still waiting (the state's `review` is only cleared by a decision) or has
no tool message gets a "dismissed" audit record and a tool message saying it did not run.
A tool message another client wrote for such a call is replaced (same id); a missing one
goes right after the turn's other tool messages, before what the client sent since.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, RemoveMessage, ToolMessage

from agentcli.audit.records import audit_record

NOT_RUN = (
    "not run: the review was left without a decision (dismissed by the client);"
    " the call did not run and has no result"
)


def reconcile(state: Mapping[str, Any]) -> dict[str, Any] | None:
    """The state update that settles calls left without a decision, or None if none were."""
    messages: Sequence[Any] = state.get("messages", [])
    last = next((i for i in range(len(messages) - 1, -1, -1) if _is_ai(messages[i])), None)
    if last is None:
        return None
    turn: AIMessage = messages[last]
    calls = [*turn.tool_calls, *turn.invalid_tool_calls]
    pending = state.get("review")
    waiting = (
        {item["call"]["id"] for item in pending["asking"]}
        | {call["id"] for call in pending["allowed"]}
        if pending
        else set()
    )
    after = messages[last + 1 :]
    answered = {m.tool_call_id: m for m in after if isinstance(m, ToolMessage)}
    dismissed = [c for c in calls if c.get("id") in waiting or c.get("id") not in answered]
    if not dismissed and not pending:
        return None
    replies: list[Any] = []
    audit: list[dict[str, Any]] = []
    for call in dismissed:
        call_id, name = call.get("id") or "", call.get("name") or "unknown"
        foreign = answered.get(call_id)
        extra = {"id": foreign.id} if foreign is not None else {}  # replaced in place
        replies.append(
            ToolMessage(NOT_RUN, tool_call_id=call_id, name=name, status="error", **extra)
        )
        record = {"id": call_id, "name": name, "args": call.get("args")}
        audit.append(audit_record(record, "dismissed", "agentcli", "review left undecided"))
    update: dict[str, Any] = {"audit": audit, "review": None}
    if replies:
        later = [m for m in after if not isinstance(m, ToolMessage)]
        if any(r.id is None for r in replies):  # new tool messages go before the later ones
            moved = [RemoveMessage(id=m.id) for m in later]
            update["messages"] = [*moved, *replies, *later]
        else:
            update["messages"] = replies
    return update


def _is_ai(message: Any) -> bool:
    return isinstance(message, AIMessage)
