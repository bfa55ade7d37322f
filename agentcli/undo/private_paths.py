"""agentcli's own files when they lie in the workspace (a workspace that is the home
folder holds the data folder, the snapshot store, the thread database): named so that
snapshots never keep them and undo never writes them back."""

from __future__ import annotations

from pathlib import Path

from agentcli.errors import SnapshotError


def relative(path: Path, workspace: Path) -> str:
    """`path` relative to the workspace, when it lies in it (else "")."""
    try:
        rel = path.resolve().relative_to(workspace)
    except ValueError:
        return ""
    return rel.as_posix() if rel.parts else ""


def exclude_pattern(path: Path, workspace: Path) -> str:
    """An ignore pattern that matches exactly `path` (and what is under it) when it lies in
    the workspace, else nothing: anchored, every character but letters, digits and `/`
    escaped."""
    try:
        rel = path.resolve().relative_to(workspace)
    except ValueError:
        return ""
    if not rel.parts:
        return ""
    if "\n" in str(rel):
        raise SnapshotError("the data folder's path holds a line break: no snapshot taken")
    return "/" + "".join(c if c.isalnum() or c == "/" else "\\" + c for c in rel.as_posix())
