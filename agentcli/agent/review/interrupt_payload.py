"""The question a review asks a person: the `interrupt()` payload for the calls that need
one, in LangChain v1's human-in-the-loop schema."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.messages import ToolCall

from agentcli.decisions import DECISIONS


def review_request(
    calls: Sequence[tuple[ToolCall, str]],
    allowed: Sequence[str] = DECISIONS,
    sandbox: Callable[[ToolCall], str | None] = lambda call: None,
    undo: Callable[[ToolCall], str | None] = lambda call: None,
    hook: Callable[[ToolCall], str | None] = lambda call: None,
) -> dict[str, Any]:
    """The interrupt payload for the calls that need a person (v1 HITL schema, plus `id`;
    `sandbox`: the confinement a call would run under, when an approve may lift it once
    with `"sandbox": "off"`; `undo`: why undo could not take back all the call changes;
    `hook`: what the person's hooks said of it, when one asked, failed or changed its
    arguments: such a call is answered by a person, never by a flag or rule)."""
    return {
        "action_requests": [
            {
                "id": call["id"],
                "name": call["name"],
                "args": call["args"],
                "description": f"Tool execution requires approval ({reason})",
                **({"sandbox": label} if (label := sandbox(call)) else {}),
                **({"undo": limit} if (limit := undo(call)) else {}),
                **({"hook": said} if (said := hook(call)) else {}),
            }
            for call, reason in calls
        ],
        "review_configs": [
            {"action_name": call["name"], "allowed_decisions": list(allowed)} for call, _ in calls
        ],
    }
