"""Answers the server cut off: at `max_tokens` or a full context (`finish_reason: "length"`),
or by its own truncation (llama.cpp's `truncated`, see compatible_chat.py).

Such an answer is kept (its text is what the model said) but it ends the run, reported as
`incomplete`; any tool call in it may be cut short (arguments half written), so its calls
are removed before the review sees them: none of them runs. Their names are kept in the
message's `response_metadata` (never sent to a server) for the event that reports it and
the transcript that marks it (threads/cut_off_answer.py).
"""

from __future__ import annotations

from langchain_core.messages import AIMessage, BaseMessage

from agentcli.threads.cut_off_answer import CUT_OFF, DROPPED


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
