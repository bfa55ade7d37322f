"""The person's UserPromptSubmit hooks on a message, before it is sent: for a local thread
and for one on a LangGraph server alike. They run here, on the person's machine, where
their config is (a server never runs them); a block keeps the message, nothing is sent."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentcli.agent.untrusted_text_fence import fence
from agentcli.errors import HookBlocked
from agentcli.events import Event, HookNote
from agentcli.hooks.hook_set import hook_set
from agentcli.hooks.turn_events import prompt_submitted
from agentcli.session.stream_events import hook_decision


def submitted(
    settings: Any, redact: Any, text: str, thread: str, workspace: Path, mode: str
) -> tuple[str, list[Event]]:
    """The message with what the hooks added (their context, fenced: it may quote
    anything), and their notes for the person and decisions for scripts (the events that
    come before the run's). HookBlocked if one blocked it."""
    hooks = hook_set(settings, (settings.api_key, settings.db_url), redact)
    heard = prompt_submitted(hooks, text, thread, workspace, mode)
    if heard.blocked:
        raise HookBlocked(f"your message was not sent: {heard.blocked}")
    text += "".join(f"\n\n{fence('hook_context', said)}" for said in heard.context)
    decided = [hook_decision(record) for record in heard.decided]
    return text, [*(HookNote(said) for said in heard.notes), *decided]
