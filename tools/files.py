"""File tools: read, write, edit and list files inside the workspace."""

from __future__ import annotations

from pathlib import Path

from tools.base import Runtime, ToolError, builtin_tool, context_of
from tools.output import cap_output
from tools.paths import display_path, looks_binary, resolve_in_workspace

DEFAULT_READ_LINES = 2000
MAX_LIST_ENTRIES = 500
NOTICE_RESERVE = 200  # characters kept free for read_file's "read on" notice


def _existing_file(runtime: Runtime, path: str) -> tuple[Path, str]:
    """Resolve ``path`` to a regular, non-binary file; return it and its display name."""
    workspace = context_of(runtime).workspace
    target = resolve_in_workspace(workspace, path)
    shown = display_path(workspace, target)
    if not target.exists():
        raise ToolError(f"'{shown}' does not exist")
    if not target.is_file():
        raise ToolError(f"'{shown}' is not a file (use list_dir for directories)")
    if looks_binary(target):
        size = target.stat().st_size
        raise ToolError(f"'{shown}' is a binary file ({size} bytes); only text files can be read")
    return target, shown


@builtin_tool
def read_file(
    path: str, runtime: Runtime, offset: int | None = None, limit: int | None = None
) -> str:
    """Read a text file from the workspace, with line numbers.

    Each line is shown as its number, a tab, then the text. Long files are shown a part at a
    time; the result then ends with the offset to read on from.

    Args:
        path: File path, relative to the workspace root.
        offset: 1-based number of the first line to show (default 1).
        limit: How many lines to show at most (default 2000).
    """
    offset = 1 if offset is None else offset
    limit = DEFAULT_READ_LINES if limit is None else limit
    if offset < 1 or limit < 1:
        raise ToolError("offset and limit must be at least 1")
    target, shown = _existing_file(runtime, path)
    budget = context_of(runtime).max_output_chars - NOTICE_RESERVE
    out: list[str] = []
    used = total = 0
    full = False
    with target.open(encoding="utf-8", errors="replace") as handle:
        for total, line in enumerate(handle, start=1):
            if total < offset or full or len(out) >= limit:
                continue
            numbered = f"{total:6}\t{line.rstrip(chr(13) + chr(10))}"
            if out and used + len(numbered) + 1 > budget:
                full = True
                continue
            if len(numbered) > budget:
                numbered = f"{numbered[:budget]} [... line cut at {budget} characters]"
            out.append(numbered)
            used += len(numbered) + 1
    if total == 0:
        return f"'{shown}' is empty"
    if offset > total:
        raise ToolError(f"offset {offset} is past the end of '{shown}' ({total} lines)")
    last = offset + len(out) - 1
    if last < total:
        out.append(
            f"[lines {offset}-{last} of {total} shown; "
            f"call read_file with offset={last + 1} to read on]"
        )
    return cap_output("\n".join(out), context_of(runtime).max_output_chars)


@builtin_tool
def write_file(path: str, content: str, runtime: Runtime) -> str:
    """Write a text file in the workspace, replacing it if it exists.

    Missing parent folders are created. To change part of an existing file, prefer edit_file.

    Args:
        path: File path, relative to the workspace root.
        content: The complete new text of the file.
    """
    workspace = context_of(runtime).workspace
    target = resolve_in_workspace(workspace, path)
    shown = display_path(workspace, target)
    if target.is_dir():
        raise ToolError(f"'{shown}' is a directory")
    existed = target.exists()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8", newline="")
    except OSError as exc:
        raise ToolError(f"cannot write '{shown}': {exc.strerror or exc}") from exc
    lines = content.count("\n") + (1 if content and not content.endswith("\n") else 0)
    size = len(content.encode("utf-8"))
    return f"{'overwrote' if existed else 'created'} '{shown}' ({lines} lines, {size} bytes)"


@builtin_tool
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
    target, shown = _existing_file(runtime, path)
    # surrogateescape keeps bytes that are not UTF-8 exactly as they were.
    with target.open(encoding="utf-8", errors="surrogateescape", newline="") as handle:
        text = handle.read()
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
    try:
        target.write_text(
            text.replace(old_text, new_text, 1),
            encoding="utf-8",
            errors="surrogateescape",
            newline="",
        )
    except OSError as exc:
        raise ToolError(f"cannot write '{shown}': {exc.strerror or exc}") from exc
    old_lines, new_lines = old_text.count("\n") + 1, new_text.count("\n") + 1
    return f"edited '{shown}' at line {line}: replaced {old_lines} line(s) with {new_lines}"


@builtin_tool
def list_dir(runtime: Runtime, path: str = ".") -> str:
    """List a directory of the workspace: folders first, then files, each sorted by name.

    Each entry shows its kind (dir, file, link, other), its size in bytes for files, and its name.

    Args:
        path: Directory path, relative to the workspace root.
    """
    workspace = context_of(runtime).workspace
    target = resolve_in_workspace(workspace, path)
    shown = display_path(workspace, target)
    if not target.is_dir():
        problem = "is not a directory" if target.exists() else "does not exist"
        raise ToolError(f"'{shown}' {problem}")
    rows: list[tuple[int, str, str]] = []
    for entry in target.iterdir():
        if entry.is_symlink():
            rows.append((1, entry.name, f"link  {'-':>10}  {entry.name} -> {entry.readlink()}"))
        elif entry.is_dir():
            rows.append((0, entry.name, f"dir   {'-':>10}  {entry.name}/"))
        elif entry.is_file():
            try:
                size = str(entry.stat().st_size)
            except OSError:
                size = "?"
            rows.append((1, entry.name, f"file  {size:>10}  {entry.name}"))
        else:
            rows.append((1, entry.name, f"other {'-':>10}  {entry.name}"))
    rows.sort(key=lambda row: (row[0], row[1].lower(), row[1]))
    lines = [f"{shown}: {len(rows)} entries"] + [row[2] for row in rows[:MAX_LIST_ENTRIES]]
    if len(rows) > MAX_LIST_ENTRIES:
        lines.append(f"[... {len(rows) - MAX_LIST_ENTRIES} more entries not shown]")
    return cap_output("\n".join(lines), context_of(runtime).max_output_chars)
