"""What undo cannot take back because it happened outside the workspace.

The snapshots hold the workspace only. A shell command that ran outside the sandbox (the
review's "unconfined once", a rule with `sandbox = "off"`, `[sandbox] mode = "off"`) could
write anywhere, and a tool that is not built in (an MCP server's, a user's) may change
things agentcli never sees. Undo says so, per call, naming the paths outside the workspace
a command names: which files it really wrote is not known (a `cd ..` first, a script), so
the paths are what it names, and the call is always named.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentcli.undo.call_snapshots import READ_ONLY_TOOLS
from agentcli.undo.undo_limits import FILE_TOOLS, SHELL, command_words

BUILT_IN = frozenset({*READ_ONLY_TOOLS, *FILE_TOOLS, SHELL})
NAMED = 10  # paths named per command, then "..."
COMMAND_CHARS = 120  # of a command, in its line


def outside_changes(messages: Sequence[Any], turn: int, workspace: Path) -> list[str]:
    """A line for each call that ran since before user message `turn` and may have changed
    files outside `workspace`, which undo leaves as they are."""
    lines, others = [], []
    calls: dict[str, dict[str, Any]] = {}
    number = 0
    for message in messages:
        if message.type == "human":
            number += 1
        for call in getattr(message, "tool_calls", None) or []:
            calls[str(call.get("id"))] = call
        if message.type != "tool" or number < turn:
            continue
        call = calls.get(str(message.tool_call_id), {})
        name = str(message.name or call.get("name") or "")
        sandbox = message.additional_kwargs.get("sandbox")
        if name == SHELL and isinstance(sandbox, str) and sandbox.startswith("off"):
            args = call.get("args") if isinstance(call.get("args"), dict) else {}
            lines.append(_unconfined(str((args or {}).get("command", "")), workspace))
        elif name and name not in BUILT_IN and message.status != "error":
            others.append(name)
    if others:
        lines.append(
            f"{', '.join(dict.fromkeys(others))} {'is' if len(set(others)) == 1 else 'are'}"
            " not built in: what these calls changed outside the workspace is not restored"
        )
    return lines


def _unconfined(command: str, workspace: Path) -> str:
    shown = command if len(command) <= COMMAND_CHARS else command[: COMMAND_CHARS - 1] + "…"
    paths = outside_paths(command, workspace)
    named = ", ".join(paths[:NAMED]) + (", ..." if len(paths) > NAMED else "")
    return (
        f"ran outside the sandbox, so what it changed outside the workspace is not restored:"
        f" shell {shown}" + (f" (outside the workspace it names {named})" if paths else "")
    )


def outside_paths(command: str, workspace: Path) -> list[str]:
    """The words of `command` that name a path outside `workspace` (absolute, `~`, or
    climbing out with `..`), as written."""
    root = workspace.resolve()
    found = []
    for word in command_words(command):
        if not (word.startswith(("/", "~")) or ".." in Path(word).parts):
            continue
        where = Path(os.path.normpath(root / Path(word).expanduser()))
        if where.parts[:2] in (("/", "dev"), ("/", "proc")):  # /dev/null: nothing kept
            continue
        if where != root and root not in where.parents and word not in found:
            found.append(word)
    return found
