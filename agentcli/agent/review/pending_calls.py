"""The review channel read back against the model's turn: what the approve node may act on.

The `review` channel holds the policy's verdicts while a person decides the rest, and
any client of a LangGraph server can write it (`Command(update={"review": ...})`). So
the approve node believes no entry of it as such: each must be, exactly, a call of the
model's last turn (same id, name and arguments as canonical JSON) that has no tool
message yet, named once. What runs and what is asked is then the turn's own call, never
the channel's copy. An entry naming a real call in any other way refuses that call (it
did not run: the model is told, and may call again to have it reviewed); an entry
naming no call of the turn is only recorded.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, ToolCall, ToolMessage

from agentcli.threads.store_key import canonical

ALTERED = (
    "not run: the review of this call was changed from outside agentcli's review;"
    " call it again to have it reviewed"
)


@dataclass
class Vetted:
    allowed: list[ToolCall] = field(default_factory=list)
    asking: list[tuple[ToolCall, str]] = field(default_factory=list)
    altered: list[ToolCall] = field(default_factory=list)  # real calls: refused
    strays: list[dict[str, Any]] = field(default_factory=list)  # no call of the turn


def answered_ids(messages: Sequence[Any], turn: AIMessage) -> set[str]:
    """The call ids with a tool message after the model's turn."""
    after = False
    ids: set[str] = set()
    for message in messages:
        if message is turn:
            after = True
        elif after and isinstance(message, ToolMessage):
            ids.add(message.tool_call_id)
    return ids


def vet(pending: Any, turn: AIMessage, answered: set[str]) -> Vetted:
    calls = {c["id"]: c for c in turn.tool_calls if isinstance(c.get("id"), str)}
    entries: list[tuple[str, Any, Any]] = []
    allowed = pending.get("allowed") if isinstance(pending, Mapping) else None
    asking = pending.get("asking") if isinstance(pending, Mapping) else None
    out = Vetted()
    if not isinstance(allowed, list) or not isinstance(asking, list):  # nothing to believe
        out.altered = [c for i, c in calls.items() if i not in answered]
        return out
    entries = [("allowed", entry, "") for entry in allowed]
    for item in asking:
        item = item if isinstance(item, Mapping) else {}
        entries.append(("asking", item.get("call"), item.get("reason")))
    named: dict[str, int] = {}
    good: list[tuple[str, ToolCall, str]] = []
    bad: set[str] = set()
    for kind, raw, reason in entries:
        call_id = raw.get("id") if isinstance(raw, Mapping) else None
        real = calls.get(call_id) if isinstance(call_id, str) else None
        if real is None or not isinstance(call_id, str) or call_id in answered:
            out.strays.append(_record(raw))
            continue
        named[call_id] = named.get(call_id, 0) + 1
        if isinstance(reason, str) and _same(raw, real):
            good.append((kind, real, reason))
        else:
            bad.add(call_id)
    bad |= {i for i, count in named.items() if count > 1}
    for kind, real, reason in good:
        if real["id"] in bad:
            continue
        if kind == "allowed":
            out.allowed.append(real)
        else:
            out.asking.append((real, reason))
    out.altered = [calls[i] for i in calls if i in bad]
    return out


def _same(raw: Mapping[str, Any], real: ToolCall) -> bool:
    try:
        return raw.get("name") == real["name"] and canonical(raw.get("args")) == canonical(
            real["args"]
        )
    except (TypeError, ValueError):
        return False


def _record(raw: Any) -> dict[str, Any]:
    """What an audit record can say of an entry that names no call of the turn."""
    raw = raw if isinstance(raw, Mapping) else {}
    return {
        "id": str(raw.get("id"))[:200],
        "name": str(raw.get("name"))[:200],
        "args": raw.get("args") if isinstance(raw.get("args"), dict) else None,
    }
