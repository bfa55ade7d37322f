"""What a hook said, read as Claude Code reads it.

- exit 0: stdout, if it is a JSON object, is the hook's answer: `hookSpecificOutput`
  (`permissionDecision` "allow" | "deny" | "ask", `permissionDecisionReason`, `updatedInput`,
  `additionalContext`), the older top-level `decision` ("approve" | "block") and `reason`,
  `continue: false` with `stopReason`, and `systemMessage` (for the person). Other stdout is
  plain text (context for the model on UserPromptSubmit, ignored elsewhere).
- exit 2: a block; stderr is the reason, stdout is ignored.
- any other exit: a non-blocking error; stderr is shown to the person.

Where agentcli is stricter, it fails closed: a hook that timed out or could not start, stdout
that begins like JSON and does not parse, or a decision it does not know, is `failed`; a
PreToolUse hook that failed has the call asked about (hooks/pre_tool_use.py).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from agentcli.hooks.command_run import Finished

BLOCK_EXIT = 2
DECISIONS = {"allow", "deny", "ask"}
_LEGACY = {"approve": "allow", "block": "deny"}  # PreToolUse's older top-level decision
_SHOWN = 2000  # characters of a reason or message kept


@dataclass(frozen=True)
class HookReply:
    """One hook's answer. `decision`: "allow" | "deny" | "ask" (PreToolUse), "block" (the
    other events), or None; `reason`: why (for the model on deny and block, for the person on
    ask); `updated`: a PreToolUse hook's updatedInput; `context`: text for the model;
    `message`: text for the person; `failed`: why the hook gave no usable answer."""

    command: str
    decision: str | None = None
    reason: str = ""
    updated: dict[str, Any] | None = None
    context: str = ""
    message: str = ""
    failed: str = ""
    stop: bool = False  # `continue: false`


def read_reply(command: str, event: str, finished: Finished) -> HookReply:
    if finished.status is None:
        return HookReply(command, failed=finished.said())
    if finished.status == BLOCK_EXIT:
        return HookReply(command, _blocked(event), _clip(finished.stderr.strip()))
    if finished.status != 0:
        return HookReply(command, message=_clip(f"hook {finished.said()}"))
    out = finished.stdout.strip()
    if not out.startswith("{"):
        return HookReply(command, context=_clip(out) if event == "UserPromptSubmit" else "")
    try:
        answer = json.loads(out)
    except ValueError:
        return HookReply(command, failed="its output began like JSON but is not JSON")
    if not isinstance(answer, dict):
        return HookReply(command, failed="its output is not a JSON object")
    return _answer(command, event, answer)


def _answer(command: str, event: str, answer: dict[str, Any]) -> HookReply:
    specific = answer.get("hookSpecificOutput")
    specific = specific if isinstance(specific, dict) else {}
    message = _text(answer.get("systemMessage"))
    context = _text(specific.get("additionalContext"))
    stop = answer.get("continue") is False
    decision: str | None = None
    reason = ""
    updated = None
    if event == "PreToolUse":
        said = specific.get("permissionDecision")
        if said is None and answer.get("decision") is not None:
            said = _LEGACY.get(str(answer.get("decision")), answer.get("decision"))
        if said is not None and said not in DECISIONS:
            return HookReply(command, failed=f"unknown permissionDecision {str(said)[:40]!r}")
        decision = said
        reason = _text(specific.get("permissionDecisionReason") or answer.get("reason"))
        raw = specific.get("updatedInput")
        if raw is not None and not isinstance(raw, dict):
            return HookReply(command, failed="updatedInput is not a JSON object")
        updated = raw
        if stop:
            decision, reason = "deny", _text(answer.get("stopReason")) or reason
    elif answer.get("decision") == "block" or stop:
        decision = "block"
        reason = _text(answer.get("reason") or answer.get("stopReason"))
    return HookReply(command, decision, reason, updated, context, message, stop=stop)


def _blocked(event: str) -> str:
    return "deny" if event == "PreToolUse" else "block"


def _text(value: Any) -> str:
    return _clip(value) if isinstance(value, str) else ""


def _clip(text: str) -> str:
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"
