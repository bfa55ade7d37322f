"""An answer the server cut off (agent/model/cut_off_answers.py): how its message is marked,
and how the transcript reads the mark (the reason as a person reads it: events.why_cut_off).

The agent node keeps the text of such an answer, with `response_metadata` naming why it was
cut (`agentcli_cut_off`: "length" or "truncated") and the calls it dropped unrun
(`agentcli_dropped_calls`); langchain-openai never sends `response_metadata` to a server.
"""

from __future__ import annotations

from typing import Any

CUT_OFF = "agentcli_cut_off"  # response_metadata: why the answer was cut off
DROPPED = "agentcli_dropped_calls"  # response_metadata: names of the calls not run


def marked_cut_off(message: Any) -> tuple[str, list[str]] | None:
    """(reason, dropped call names) for an answer the agent node marked as cut off."""
    meta = getattr(message, "response_metadata", None) or {}
    if isinstance(meta.get(CUT_OFF), str):
        return meta[CUT_OFF], [str(n) for n in meta.get(DROPPED) or []]
    return None
