"""The events around a turn that are not a call's review: what each gives its hooks and what
agentcli does with their replies (PreToolUse is the review's: agent/review/hook_checks.py).

- UserPromptSubmit (`prompt`): a block (exit 2, `decision: "block"`) keeps the message from
  being sent; plain stdout or `additionalContext` goes to the model with the message, fenced.
- PostToolUse (`tool_name`, `tool_input`, `tool_response`, `tool_use_id`): the call has run;
  a block's reason and any `additionalContext` are added to its result for the model.
- Stop (`stop_hook_active`, `last_assistant_message`): a block sends its reason to the model
  as a message and the turn goes on, at most MAX_STOP_BLOCKS times in a row.
- Notification (`message`, `title`, `notification_type`): when a review waits for the person
  (where `[notify] command` runs); its replies are not read.

Every reply's `systemMessage` and a non-blocking error's stderr are for the person (`notes`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentcli.hooks.decision_notes import decisions
from agentcli.hooks.hook_set import HookSet, hook_label
from agentcli.hooks.replies import HookReply
from agentcli.hooks.tool_names import claude_input, claude_name

MAX_STOP_BLOCKS = 3  # a Stop hook that always blocks ends the turn after this many


@dataclass
class Heard:
    """What an event's hooks said: `blocked` (a hook's label and reason), `context` (text for
    the model), `notes` (text for the person)."""

    blocked: str | None = None
    context: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    decided: list[dict[str, Any]] = field(default_factory=list)  # decision_notes.py


def heard(event: str, replies: list[HookReply], call: dict[str, Any] | None = None) -> Heard:
    out = Heard(decided=decisions(event, replies, call))
    for reply in replies:
        label = hook_label(reply.command)
        if reply.failed:
            out.notes.append(f"{label}: it failed ({reply.failed})")
        if reply.message:
            out.notes.append(f"{label}: {reply.message}")
        if reply.decision == "block" and out.blocked is None:
            out.blocked = f"{label}" + (f": {reply.reason}" if reply.reason else "")
        if reply.context:
            out.context.append(reply.context)
    return out


def prompt_submitted(
    hooks: HookSet | None, text: str, thread: str, workspace: Path, mode: str
) -> Heard:
    if hooks is None or not hooks.has("UserPromptSubmit"):
        return Heard()
    replies = hooks.run(
        "UserPromptSubmit", {"prompt": text}, thread=thread, workspace=workspace, mode=mode
    )
    return heard("UserPromptSubmit", replies)


def tool_used(
    hooks: HookSet | None,
    call: dict[str, Any],
    result: str,
    ok: bool,
    thread: str,
    workspace: Path,
    mode: str,
) -> Heard:
    if hooks is None or not hooks.has("PostToolUse"):
        return Heard()
    name = call["name"]
    tool_input = claude_input(name, call.get("args") or {}, workspace)
    response: dict[str, Any] = {"output": result, "success": ok}
    if "file_path" in tool_input:
        response["filePath"] = tool_input["file_path"]
    fields = {
        "tool_name": claude_name(name),
        "tool_input": tool_input,
        "tool_response": response,
        "tool_use_id": call.get("id"),
    }
    replies = hooks.run(
        "PostToolUse", fields, thread=thread, workspace=workspace, mode=mode, tool=name
    )
    return heard("PostToolUse", replies, call)


def stopping(
    hooks: HookSet | None, answer: str, blocks: int, thread: str, workspace: Path, mode: str
) -> Heard:
    """`blocks`: how many times in a row a Stop hook has sent the turn on already."""
    if hooks is None or not hooks.has("Stop") or blocks >= MAX_STOP_BLOCKS:
        return Heard()
    fields = {"stop_hook_active": blocks > 0, "last_assistant_message": answer}
    return heard("Stop", hooks.run("Stop", fields, thread=thread, workspace=workspace, mode=mode))


def notified(hooks: HookSet | None, message: str, thread: str, workspace: Path) -> Heard:
    if hooks is None or not hooks.has("Notification"):
        return Heard()
    fields = {"message": message, "title": "agentcli", "notification_type": "permission_prompt"}
    replies = hooks.run("Notification", fields, thread=thread, workspace=workspace)
    return heard("Notification", replies)
