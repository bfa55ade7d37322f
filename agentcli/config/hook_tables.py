"""The `[[hooks.EVENT]]` tables, checked and made flat: one {"matcher", "command", "timeout"}
per command, in the file's order.

Two shapes are read. agentcli's own:

    [[hooks.PreToolUse]]
    matcher = "Bash"
    command = "python3 ~/hooks/check.py"
    timeout = 10

and Claude Code's settings.json shape written as TOML, so a hook list can be carried over:

    [[hooks.PreToolUse]]
    matcher = "Bash"
    hooks = [{ type = "command", command = "...", timeout = 10 }]

Hooks come from the person's config file alone: no environment variable, flag or file in the
workspace sets one (fields.py gives the keys no variable; nothing else reads them).
"""

from __future__ import annotations

import re
from typing import Any

from agentcli.config.fields import HOOK_EVENTS

DEFAULT_TIMEOUT = 60.0  # seconds; a hook that takes longer is stopped and counts as failed
MAX_TIMEOUT = 600.0
TABLE_KEYS = {"matcher", "command", "timeout", "hooks", "type"}


def hook_tables(settings: Any, sources: dict[str, str], problems: list[str]) -> dict[str, Any]:
    """The Settings changes that replace each event's raw tables by checked, flat ones."""
    changes: dict[str, Any] = {}
    for event, attr in HOOK_EVENTS.items():
        raw = getattr(settings, f"hooks_{attr}")
        origin = sources.get(f"hooks.{event}", "config")
        changes[f"hooks_{attr}"] = _flat(event, raw, origin, problems)
    return changes


def _flat(event: str, tables: list[Any], origin: str, problems: list[str]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for number, table in enumerate(tables, 1):
        where = f"[[hooks.{event}]] number {number} in {origin}"
        if not isinstance(table, dict):
            problems.append(f"{where}: expected a table with matcher and command")
            continue
        unknown = sorted(set(table) - TABLE_KEYS)
        if unknown:
            problems.append(f"{where}: unknown key {unknown[0]!r} (matcher, command, timeout)")
            continue
        matcher = table.get("matcher", "")
        if not isinstance(matcher, str) or not _compiles(matcher):
            problems.append(f"{where}: matcher must be a tool name, names joined by |, or a regex")
            continue
        inner = table.get("hooks")
        if inner is None:
            commands = [table]
        elif isinstance(inner, list) and "command" not in table:
            commands = inner
        else:
            problems.append(f"{where}: give command, or hooks = [{{ command = ... }}], not both")
            continue
        for entry in commands:
            checked = _command(entry, where, problems)
            if checked is not None:
                found.append({"matcher": matcher, **checked})
    return found


def _command(entry: Any, where: str, problems: list[str]) -> dict[str, Any] | None:
    if not isinstance(entry, dict):
        problems.append(f"{where}: each hook is a table with a command")
        return None
    if entry.get("type", "command") != "command":
        problems.append(f"{where}: type {entry.get('type')!r}: only command hooks are run")
        return None
    command = entry.get("command")
    if not isinstance(command, str) or not command.strip():
        problems.append(f"{where}: command must be a command line (run by bash -c)")
        return None
    timeout = entry.get("timeout", DEFAULT_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float):
        problems.append(f"{where}: timeout must be a number of seconds, e.g. 10")
        return None
    if not 0 < timeout <= MAX_TIMEOUT:
        problems.append(f"{where}: timeout must be more than 0 and at most {MAX_TIMEOUT:g} s")
        return None
    return {"command": command, "timeout": float(timeout)}


def _compiles(matcher: str) -> bool:
    if matcher in ("", "*"):  # every tool
        return True
    try:
        re.compile(matcher)
    except re.error:
        return False
    return True
