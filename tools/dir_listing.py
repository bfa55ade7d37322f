"""list_dir: a folder of the workspace, folders first, without what the rules protect."""

from __future__ import annotations

import os
import stat

from .base import Runtime, ToolError, builtin_tool, context_of
from .file_guard import guard
from .fileio import open_folder
from .output import cap_output
from .paths import locate
from .plurals import counted, plural
from .preconditions import path_inside
from .typed_paths import typed_relative

MAX_LIST_ENTRIES = 500


def _entry_row(entry: os.DirEntry[str], fd: int) -> tuple[int, str, str]:
    name = entry.name
    try:
        info = entry.stat(follow_symlinks=False)
    except OSError:
        return (1, name, f"other {'-':>10}  {name}")
    if stat.S_ISLNK(info.st_mode):
        try:
            target = os.readlink(name, dir_fd=fd)
        except OSError:
            target = "?"
        return (1, name, f"link  {'-':>10}  {name} -> {target}")
    if stat.S_ISDIR(info.st_mode):
        return (0, name, f"dir   {'-':>10}  {name}/")
    if stat.S_ISREG(info.st_mode):
        return (1, name, f"file  {info.st_size:>10}  {name}")
    return (1, name, f"other {'-':>10}  {name}")


@builtin_tool(precheck=path_inside)
def list_dir(runtime: Runtime, path: str = ".") -> str:
    """List a directory of the workspace: folders first, then files, each sorted by name.

    Each entry shows its kind (dir, file, link, other), its size in bytes for files, and its name.

    Args:
        path: Directory path, relative to the workspace root.
    """
    context = context_of(runtime)
    with locate(context.workspace, path, check=guard(context, "list_dir", path)) as found:
        shown = found.rel
        fd = open_folder(found)
    typed = typed_relative(context.workspace, path)
    hidden = 0
    rows = []
    try:
        with os.scandir(fd) as entries:
            for entry in entries:
                if context.protection("list_dir", _child(shown, entry.name), typed):
                    hidden += 1  # not even its name: a deny on secrets/** covers listing it
                else:
                    rows.append(_entry_row(entry, fd))
    except OSError as exc:
        raise ToolError(f"cannot list '{shown}': {exc.strerror or exc}") from exc
    finally:
        os.close(fd)
    rows.sort(key=lambda row: (row[0], row[1].lower(), row[1]))
    lines = [f"{shown}: {counted(len(rows), 'entry')}"] + [
        row[2] for row in rows[:MAX_LIST_ENTRIES]
    ]
    if len(rows) > MAX_LIST_ENTRIES:
        lines.append(f"[... {len(rows) - MAX_LIST_ENTRIES} more entries not shown]")
    if hidden:
        lines.append(
            f"[{hidden} more {plural('entry', hidden)} not shown: the approval rules protect them]"
        )
    return cap_output("\n".join(lines), context.max_output_chars)


def _child(folder: str, name: str) -> str:
    return name if folder == "." else f"{folder}/{name}"
