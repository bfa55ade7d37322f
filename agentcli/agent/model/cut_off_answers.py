"""Answers the server cut off: at `max_tokens` or a full context (`finish_reason: "length"`),
or by its own truncation (llama.cpp's `truncated`, see compatible_chat.py).

Such an answer is kept (its text is what the model said) but it ends the run, reported as
`incomplete`; any tool call in it may be cut short (arguments half written), so its calls
are removed before the review sees them: none of them runs. Their names are kept in the
message's `response_metadata` (never sent to a server) for the event that reports it.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, BaseMessage

CUT_OFF = "agentcli_cut_off"  # response_metadata: why the answer was cut off
DROPPED = "agentcli_dropped_calls"  # response_metadata: names of the calls not run


def cut_off_reason(message: BaseMessage) -> str | None:
    """ "length" or "truncated" when the server cut this answer off, else None."""
    meta = message.response_metadata or {}
    if meta.get("finish_reason") == "length":
        return "length"
    if meta.get("truncated") is True:
        return "truncated"
    return None


def without_calls(message: AIMessage, reason: str) -> AIMessage:
    """The answer with its (possibly partial) tool calls removed and the cut marked."""
    names = [c["name"] for c in message.tool_calls] + [
        c.get("name") or "" for c in message.invalid_tool_calls
    ]
    extra = {k: v for k, v in message.additional_kwargs.items() if k != "tool_calls"}
    meta = {**message.response_metadata, CUT_OFF: reason, DROPPED: names}
    return message.model_copy(
        update={
            "tool_calls": [],
            "invalid_tool_calls": [],
            "additional_kwargs": extra,
            "response_metadata": meta,
        }
    )


def marked_cut_off(message: Any) -> tuple[str, list[str]] | None:
    """(reason, dropped call names) for an answer the agent node marked as cut off."""
    meta = getattr(message, "response_metadata", None) or {}
    if isinstance(meta.get(CUT_OFF), str):
        return meta[CUT_OFF], [str(n) for n in meta.get(DROPPED) or []]
    return None
