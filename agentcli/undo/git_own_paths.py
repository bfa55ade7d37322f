"""Paths git never keeps, so the snapshots cannot either: files inside a `.git` folder (a
hook, a config), and the files of a repository of its own inside the workspace.

Git refuses to store a path with a component it takes for `.git`: any case (`.GIT`), and
with `core.protectNTFS` (on by default everywhere) also `.git` followed by dots or spaces,
`git~1` (its short DOS name) and `.git:stream`, with `\\` splitting components too; and a
symlink named `.gitmodules` (or its short names). One such path among a snapshot's files
made git refuse the whole snapshot, so they are left out of it and named as not kept.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

# a component git takes for `.git` (read-cache.c: verify_dotfile, is_ntfs_dotgit)
_DOT_GIT = re.compile(r"(?:\.git|git~1)[. ]*(?::.*)?", re.IGNORECASE | re.DOTALL)
# for a symlink only: a component git takes for `.gitmodules` (is_ntfs_dotgitmodules)
_DOT_GITMODULES = re.compile(
    r"(?:\.gitmodules|gitmod~\d+|gi7eba~\d+)[. ]*(?::.*)?", re.IGNORECASE | re.DOTALL
)
_SEPARATORS = re.compile(r"[/\\]")


def in_git_folder(rel: str) -> bool:
    """Whether the path has a component git takes for `.git`: inside one, or it itself."""
    if "git" not in rel.lower():  # the common case, at a snapshot's every changed path
        return False
    return any(_DOT_GIT.fullmatch(part) for part in _SEPARATORS.split(rel))


def writes_into_git(workspace: Path, rel: str) -> bool:
    """Whether writing `rel` in the workspace writes inside a .git folder: by its name, or
    through a symlink (`hooks` -> `.git/hooks`)."""
    if in_git_folder(rel):
        return True
    try:
        target = (workspace / rel).resolve().relative_to(workspace.resolve())
    except (OSError, ValueError, RuntimeError):
        return False  # outside the workspace: the file tools refuse it
    return in_git_folder(target.as_posix())


def refused(rel: str, workspace: Path) -> bool:
    """Whether git refuses to store this path of the workspace (the file as it is now)."""
    if in_git_folder(rel):
        return True
    low = rel.lower()
    if "gitmod" not in low and "gi7eba" not in low:
        return False
    if not any(_DOT_GITMODULES.fullmatch(p) for p in _SEPARATORS.split(rel)):
        return False
    return os.path.islink(workspace / rel)  # only a symlink of that name is refused


def nested_repository(workspace: Path, rel: str) -> str | None:
    """The folder (relative to the workspace) of a repository of its own that holds `rel`:
    a folder below the workspace with a `.git` in it, whose files git keeps none of."""
    parts = Path(os.path.normpath(rel)).parts
    if not parts or os.path.isabs(rel) or parts[0] == "..":
        return None  # not a path in the workspace
    for depth in range(1, len(parts)):
        folder = "/".join(parts[:depth])
        if os.path.lexists(workspace / folder / ".git"):
            return folder
    return None
