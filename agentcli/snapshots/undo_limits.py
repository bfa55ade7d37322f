"""What the review says about a call whose changes the snapshots cannot take back."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentcli.snapshots.call_snapshots import READ_ONLY_TOOLS, WorkspaceSnapshots
from agentcli.snapshots.shadow_git import SnapshotError

FILE_TOOLS = ("write_file", "edit_file")
SHELL = "shell"
BUILT_IN = READ_ONLY_TOOLS | {*FILE_TOOLS, SHELL}


def undo_limit(
    snapshots: WorkspaceSnapshots | None,
    workspace: Path,
    tool: str,
    args: Mapping[str, Any],
    confined: bool,
    writable: tuple[str, ...] = (),
) -> str | None:
    """Why the changes of this call could not all be undone (the review shows it after
    "cannot be undone: "), or None when they could. `confined`: a shell call runs in the
    sandbox, which lets it write in the workspace and `writable` only."""
    if tool in READ_ONLY_TOOLS:
        return None
    if snapshots is None:
        return "no snapshots are kept ([undo] snapshots = false)"
    if tool == SHELL:
        if confined:
            if writable:
                return (
                    f"files it changes in [sandbox] writable ({', '.join(writable)}) stay changed"
                )
            return None
        return "the sandbox is off, so files it changes outside the workspace stay changed"
    if tool not in FILE_TOOLS:
        return f"{tool} is not a built-in tool: what it changes outside the workspace stays changed"
    rel = str(args.get("path", ""))
    if Path(rel).name == ".gitignore":  # what it ignores from now on is no longer kept
        return f"later changes to files {rel} newly ignores (it decides what the snapshots keep)"
    return _file_limit(snapshots, workspace, rel, args)


def _file_limit(
    snapshots: WorkspaceSnapshots, workspace: Path, rel: str, args: Mapping[str, Any]
) -> str | None:
    cap = snapshots.max_file_bytes
    target = workspace / rel
    try:
        size = target.stat().st_size if target.is_file() else 0
    except OSError:
        size = 0
    content = args.get("content")
    written = len(content.encode("utf-8", "replace")) if isinstance(content, str) else 0
    if max(size, written) > cap:
        return f"{rel} is over the {_megabytes(cap)} snapshot limit ([undo] max_file_mb)"
    repo = snapshots.repo(workspace)
    try:
        repo.ensure()
        if repo.ignored(rel):
            return f"{rel} is ignored (.gitignore), so it is not in the snapshots"
    except SnapshotError:
        return "git is not installed, so no snapshot is kept"
    return None


def _megabytes(count: int) -> str:
    return f"{count / 1_000_000:g} MB"
