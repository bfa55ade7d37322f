"""A path as the model typed it: checked, and spelled relative to the workspace, without
touching the disk.

Absolute paths are accepted when they are spelled under the workspace (as given, or its real
path); everything else absolute (``/proc/self/cwd``, ``/etc``) is outside. Where a path really
leads is the walk's to say (tools/paths.py); what is typed here is also what a deny or ask
rule is tested against.
"""

from __future__ import annotations

import os
import posixpath
from pathlib import Path

from .errors import ToolError

MAX_PATH_CHARS = 4096  # PATH_MAX: a longer workspace-relative path is refused
# what sets the workspace, named in refusals (the application's --workspace option)
WORKSPACE_SETTING = "the workspace is chosen with --workspace when a thread starts"


def outside(path: str, root: str) -> ToolError:
    return ToolError(
        f"path '{path}' is outside the workspace ({root}); only paths inside it are allowed "
        f"({WORKSPACE_SETTING})"
    )


def workspace_relative(path: str, workspace: Path) -> str | None:
    """An absolute ``path`` spelled under the workspace (as given or its real path), made
    relative to it, as text ("" for the root itself); None if it starts anywhere else."""
    given = os.path.abspath(workspace)
    real = os.path.realpath(workspace)
    for root in [real] if given == real else [real, given]:
        if path == root or path.startswith(root.rstrip("/") + "/"):
            return path[len(root) :].lstrip("/")
    return None


def relative_parts(path: str, workspace: Path, shown: str) -> list[str]:
    """The components of ``path`` relative to the root, or ToolError if it starts outside."""
    if path.startswith("/"):
        rest = workspace_relative(path, workspace)
        if rest is None:
            raise outside(shown, os.path.realpath(workspace))
        return rest.split("/")
    return path.split("/")


def typed_relative(workspace: Path, path: str) -> str:
    """The path as typed, made relative and normalised without touching the disk: what a
    deny or ask rule is also tested against, besides where the path really leads."""
    rest = workspace_relative(path, workspace) if path.startswith("/") else None
    return posixpath.normpath((path if rest is None else rest).lstrip("/") or ".")


def check_typed(path: str) -> None:
    """Refuse a path no file can have, or that names a home folder: ToolError."""
    if "\x00" in path:
        raise ToolError(f"path {path!r} contains a NUL byte")
    if path.startswith("~"):
        raise ToolError(
            f"path '{path}' is outside the workspace: '~' (home directories) is not allowed; "
            f"use a path relative to the workspace ({WORKSPACE_SETTING})"
        )
    if len(path) > MAX_PATH_CHARS:
        raise ToolError(f"path '{path[:80]}...' is too long ({len(path)} characters)")
    try:
        os.fsencode(path)
    except UnicodeEncodeError as exc:
        raise ToolError(f"path {path!r} is not a valid file name (lone surrogates)") from exc
