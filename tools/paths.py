"""Where a path the model gives may point: inside the workspace, nowhere else."""

from __future__ import annotations

from pathlib import Path

from tools.base import ToolError

SNIFF_BYTES = 8192


def resolve_in_workspace(workspace: Path, path: str) -> Path:
    """Resolve ``path`` (relative to the workspace, or absolute) to a real path inside it.

    Symlinks are followed all the way, so a link that points outside is refused like ``..``.
    The path need not exist (write_file creates files). Raises ToolError otherwise.
    """
    if "\x00" in path:
        raise ToolError(f"path {path!r} contains a NUL byte")
    if path.startswith("~"):
        raise ToolError(
            f"path '{path}' is outside the workspace: '~' (home directories) is not allowed; "
            "use a path relative to the workspace"
        )
    root = Path(workspace).resolve()
    candidate = Path(path) if path else Path(".")
    try:
        resolved = (root / candidate).resolve()  # root / absolute == absolute
    except (OSError, RuntimeError) as exc:  # symlink loops, over-long names
        raise ToolError(f"path '{path}' cannot be resolved: {exc}") from exc
    if not resolved.is_relative_to(root):
        raise ToolError(
            f"path '{path}' is outside the workspace ({root}); only paths inside it are allowed"
        )
    return resolved


def display_path(workspace: Path, resolved: Path) -> str:
    """How a resolved path is shown back to the model: relative to the workspace."""
    relative = resolved.relative_to(Path(workspace).resolve()).as_posix()
    return relative or "."


def looks_binary(path: Path) -> bool:
    """True when the file's first bytes contain a NUL byte, as git and grep decide."""
    with path.open("rb") as handle:
        return b"\x00" in handle.read(SNIFF_BYTES)
