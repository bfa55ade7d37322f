"""The hooks of a run: which commands an event runs, what they are given, and their replies.

Each hook gets one JSON document on stdin, Claude Code's: `session_id` (the thread's id),
`transcript_path` (null: agentcli keeps threads in a database, `threads export` writes one),
`cwd` (the workspace), `hook_event_name`, `permission_mode`, and the event's own fields
(`tool_name`, `tool_input`, `tool_use_id`, `tool_response`, `prompt`, `message`,
`stop_hook_active`). Tool names and arguments are Claude Code's (tool_names.py).

A matcher selects tools as Claude Code's does: empty or `*`, every tool; letters, digits,
`_` and `|` only, those exact names; anything else, a regular expression searched in the
name. It is tried on both names of a tool (`Bash` and `shell`). The same command is run once
per event even when several matchers select it. Hooks run one after another, in the
config's order, in the workspace, with CLAUDE_PROJECT_DIR set to it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentcli.config.fields import HOOK_EVENTS
from agentcli.hooks.command_run import person_environment, run_command
from agentcli.hooks.replies import HookReply, read_reply
from agentcli.hooks.tool_names import claude_name

_NAMES = re.compile(r"[A-Za-z0-9_|]+")
# agentcli's approval modes as Claude Code's permission_mode names them, where one fits
_MODES = {"ask": "default", "edit": "acceptEdits", "plan": "plan"}


@dataclass(frozen=True)
class Hook:
    matcher: str
    command: str
    timeout: float

    def selects(self, tool: str | None) -> bool:
        if tool is None or self.matcher in ("", "*"):
            return True
        names = (claude_name(tool), tool)
        if _NAMES.fullmatch(self.matcher):
            wanted = self.matcher.split("|")
            return any(name in wanted for name in names)
        return any(re.search(self.matcher, name) for name in names)


@dataclass(frozen=True)
class HookSet:
    """The configured hooks, by event, and how to run them."""

    hooks: Mapping[str, tuple[Hook, ...]]
    secrets: tuple[str | None, ...] = ()  # values no hook's environment may hold
    redact: Callable[[Any], Any] = lambda value: value  # the session's, on what hooks are sent

    def has(self, event: str) -> bool:
        return bool(self.hooks.get(event))

    def selecting(self, event: str, tool: str | None = None) -> list[Hook]:
        """The hooks `run` would run for the event and `tool`, in order, without running
        them (`policy check` names them)."""
        return _once(h for h in self.hooks.get(event, ()) if h.selects(tool))

    def run(
        self,
        event: str,
        fields: Mapping[str, Any],
        *,
        thread: str,
        workspace: Path,
        mode: str = "ask",
        tool: str | None = None,
    ) -> list[HookReply]:
        """The replies of the event's hooks that select `tool`, in order."""
        chosen = self.selecting(event, tool)
        if not chosen:
            return []
        document = {
            "session_id": thread,
            "transcript_path": None,
            "cwd": str(workspace),
            "hook_event_name": event,
            "permission_mode": _MODES.get(mode, mode),
            **fields,
        }
        data = (json.dumps(self.redact(document), ensure_ascii=False) + "\n").encode()
        env = {**person_environment(self.secrets), "CLAUDE_PROJECT_DIR": str(workspace)}
        replies = []
        for hook in chosen:
            finished = run_command(hook.command, data, env, hook.timeout, cwd=workspace)
            replies.append(read_reply(hook.command, event, finished))
        return replies


def hook_set(
    settings: Any, secrets: tuple[str | None, ...] = (), redact: Any = None
) -> HookSet | None:
    """The hooks in the settings ([[hooks.EVENT]] tables, checked), or None if there are none."""
    hooks = {
        event: tuple(
            Hook(t["matcher"], t["command"], t["timeout"])
            for t in getattr(settings, f"hooks_{attr}")
        )
        for event, attr in HOOK_EVENTS.items()
    }
    if not any(hooks.values()):
        return None
    return HookSet(hooks, secrets, redact or (lambda value: value))


def hook_label(command: str) -> str:
    """How the audit and the screen name a hook: by its command, clipped."""
    line = " ".join(command.split())
    return f"hook {line[:120]}" + ("…" if len(line) > 120 else "")


def _once(hooks: Iterable[Hook]) -> list[Hook]:
    seen: set[str] = set()
    out = []
    for hook in hooks:
        if hook.command not in seen:
            seen.add(hook.command)
            out.append(hook)
    return out
