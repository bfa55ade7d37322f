"""Undo's snapshots around a group of calls the executor runs together, and what the review
says about undo.

The executor (agent/executor.py) snapshots the workspace before a group of calls that may change
files and again once the whole group has run: one record holds the group (undo takes it
back whole and says so). The workspace is not locked while the calls run, so calls of a
group run side by side, shell commands included.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from agentcli.errors import SnapshotError
from agentcli.undo.call_snapshots import READ_ONLY_TOOLS, Taken
from agentcli.undo.undo_limits import FILE_TOOLS, undo_limit


def changing(calls: Sequence[Mapping[str, Any]]) -> bool:
    """Whether a call of the group may change files (else no snapshot is taken)."""
    return any(call.get("name") not in READ_ONLY_TOOLS for call in calls)


def before_group(ctx: Any, calls: Sequence[Mapping[str, Any]]) -> tuple[dict | None, str]:
    """The snapshot before the group, as kept in the executor's state (None: none taken),
    and why it could not be taken (the calls run all the same: they were approved, and
    their results say they cannot be undone)."""
    snapshots = getattr(ctx, "snapshots", None)
    if snapshots is None or not changing(calls):
        return None, ""
    paths: list[str] | None = []
    for call in calls:
        args = call.get("args") if isinstance(call.get("args"), dict) else {}
        if call.get("name") in READ_ONLY_TOOLS:
            continue
        if call.get("name") in FILE_TOOLS and paths is not None:
            paths.append(str((args or {}).get("path", "")))  # a file tool changes its path only
        else:
            paths = None  # any other tool may change any file
    try:
        return snapshots.before(Path(ctx.workspace), paths).saved(), ""
    except SnapshotError as exc:
        return None, str(exc)


def after_group(
    ctx: Any,
    thread_id: str,
    saved: Any,
    calls: Sequence[tuple[str, str]],
    checkpoint: str | None,
    group: str,
) -> str:
    """Record the group that ran from `saved` ((call id, tool) each); why it could not be."""
    snapshots = getattr(ctx, "snapshots", None)
    taken = Taken.read(saved)
    if snapshots is None or taken is None:
        return ""
    try:
        snapshots.after(thread_id, Path(ctx.workspace), taken, calls, checkpoint, group)
    except SnapshotError as exc:
        return str(exc)
    return ""


def review_note(ctx: Any, confined: bool, call: Mapping[str, Any]) -> str | None:
    """What the review shows when this call's changes could not all be undone (`confined`:
    the sandbox will confine this call, agent/toolset/sandboxing.would_confine)."""
    args = call["args"] if isinstance(call.get("args"), dict) else {}
    return undo_limit(
        getattr(ctx, "snapshots", None),
        Path(ctx.workspace),
        call["name"],
        args,
        confined,
        tuple(getattr(getattr(ctx, "sandbox", None), "writable", ()) or ()),
    )
