"""write_file and edit_file: a file of the workspace replaced whole, atomically."""

from __future__ import annotations

from .base import Runtime, ToolError, builtin_tool, context_of
from .file_guard import binary_error, guard
from .fileio import looks_binary, open_regular, read_all, write_atomic
from .paths import locate
from .plurals import counted
from .preconditions import path_inside

MAX_EDIT_BYTES = 20_000_000  # edit_file holds the file in memory: bigger ones are refused


def _summary(verb: str, shown: str, data: bytes) -> str:
    lines = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
    return f"{verb} '{shown}' ({counted(lines, 'line')}, {counted(len(data), 'byte')})"


@builtin_tool(precheck=path_inside)
def write_file(path: str, content: str, runtime: Runtime) -> str:
    """Write a text file in the workspace, replacing it if it exists.

    Missing parent folders are created. To change part of an existing file, prefer edit_file.

    Args:
        path: File path, relative to the workspace root.
        content: The complete new text of the file.
    """
    data = content.encode("utf-8", errors="surrogateescape")
    context = context_of(runtime)
    check = guard(context, "write_file", path)
    with locate(context.workspace, path, create_dirs=True, check=check) as found:
        existed = write_atomic(found, data)
        return _summary("overwrote" if existed else "created", found.rel, data)


@builtin_tool(precheck=path_inside)
def edit_file(path: str, old_text: str, new_text: str, runtime: Runtime) -> str:
    """Replace one exact piece of text in a file of the workspace.

    old_text must occur exactly once in the file: copy it exactly (without read_file's line
    numbers) and include enough surrounding lines to make it unique.

    Args:
        path: File path, relative to the workspace root.
        old_text: The exact text to replace; must occur exactly once.
        new_text: The text to put in its place.
    """
    if not old_text:
        raise ToolError("old_text is empty; give the exact text to replace")
    context = context_of(runtime)
    with locate(context.workspace, path, check=guard(context, "edit_file", path)) as found:
        shown = found.rel
        with open_regular(found) as (fd, info):
            if looks_binary(fd):
                raise binary_error(shown, info)
            # surrogateescape keeps bytes that are not UTF-8 exactly as they were.
            text = read_all(fd, MAX_EDIT_BYTES, shown).decode("utf-8", "surrogateescape")
        count = text.count(old_text)
        if count == 0:
            raise ToolError(
                f"old_text was not found in '{shown}'; read the file again and copy the text "
                "exactly, including whitespace, without line numbers"
            )
        if count > 1:
            raise ToolError(
                f"old_text occurs {count} times in '{shown}'; include more surrounding text "
                "so that it occurs exactly once"
            )
        start = text.index(old_text)
        line = text.count("\n", 0, start) + 1
        new = text.replace(old_text, new_text, 1)
        write_atomic(found, new.encode("utf-8", "surrogateescape"))
    old_lines, new_lines = old_text.count("\n") + 1, new_text.count("\n") + 1
    return (
        f"edited '{shown}' at line {line}: replaced {counted(old_lines, 'line')} with {new_lines}"
    )
