"""What a hook decided, as one record per hook for `run -o json` and `-o jsonl` (the
`hook_decision` event): who (the hook, by its command), the event, the decision and why,
and the call it was about. Kept apart from its words for the person (`hook_note`).

Decisions: on PreToolUse `deny`, `ask` (a failed hook asks), `allow`, `updated_input` (it
gave new arguments; whether they were used is the review's); on the other events `block`;
on any, `context` (text it added for the model).
"""

from __future__ import annotations

from typing import Any

from agentcli.hooks.hook_set import hook_label
from agentcli.hooks.replies import HookReply

STREAM_KEY = "hook_decision"  # the custom stream part that carries one


def decisions(
    event: str, replies: list[HookReply], call: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    """One record per thing a hook decided (a hook that only ran says nothing; nothing a
    Notification hook answers is read)."""
    if event == "Notification":
        return []
    about = {"call_id": call.get("id"), "tool": call.get("name")} if call else {}
    out = []
    for reply in replies:
        hook = hook_label(reply.command)
        said: list[tuple[str, str]] = []
        if reply.failed:
            failed = "ask" if event == "PreToolUse" else "failed"
            said.append((failed, f"it failed ({reply.failed})"))
        elif reply.decision:
            said.append((reply.decision, reply.reason))
        if reply.updated is not None and not reply.failed:
            said.append(("updated_input", ""))
        if reply.context:
            said.append(("context", reply.context))
        for decision, reason in said:
            record = {"hook": hook, "event": event, "decision": decision, "reason": reason}
            out.append({**record, **about})
    return out
