"""What a person allowed for the rest of one thread with `A`: whole tools, or rules scoped to
a match (`shell` + `git status*`), kept as strings in the thread's `allowed_tools`.

A whole tool is its name; a scoped rule is the JSON array `["TOOL", "MATCH"]` (a tool name
never starts with `[`). Each entry counts only with its seal (agent/review/approval_seals.py),
so what a client writes into the state allows nothing.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

THREAD_LABEL = "always for this thread"
MAX_MATCH = 500  # characters in a scoped rule's match


def scoped_entry(tool: str, match: str | None) -> str:
    """The `allowed_tools` entry for `tool`, scoped to `match` (None: the whole tool)."""
    return tool if match is None else json.dumps([tool, match], ensure_ascii=False)


def thread_rules(entries: Iterable[str]) -> tuple[set[str], list[tuple[str, str]]]:
    """The whole tools, and the (tool, match) rules, among a thread's allowed entries; an
    entry that reads as neither allows nothing."""
    names: set[str] = set()
    scoped: list[tuple[str, str]] = []
    for entry in entries:
        if not entry.startswith("["):
            names.add(entry)
            continue
        try:
            tool, match = json.loads(entry)
        except (ValueError, TypeError):
            continue
        if isinstance(tool, str) and isinstance(match, str) and match:
            scoped.append((tool, match))
    return names, scoped
