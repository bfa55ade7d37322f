"""File tools: read, write, edit and list files inside the workspace.

Every path goes through tools/paths.py `locate` (a walk beneath the workspace that follows no
link blindly) and every read or write through tools/fileio.py (descriptors, never the path).
"""

from __future__ import annotations

import codecs
import os
import stat

from tools.base import Runtime, ToolError, builtin_tool, context_of
from tools.fileio import (
    chunks,
    looks_binary,
    open_folder,
    open_regular,
    read_all,
    write_atomic,
)
from tools.output import cap_output
from tools.paths import locate

DEFAULT_READ_LINES = 2000
MAX_LIST_ENTRIES = 500
MAX_EDIT_BYTES = 20_000_000  # edit_file holds the file in memory: bigger ones are refused
NOTICE_RESERVE = 200  # characters kept free for read_file's "read on" notice


def _binary_error(shown: str, info: os.stat_result) -> ToolError:
    size = info.st_size
    return ToolError(f"'{shown}' is a binary file ({size} bytes); only text files can be read")


class _Lines:
    """read_file's window of numbered lines, collected from a stream of decoded text.

    It keeps at most ``budget`` characters of output and of the line being read, so a file
    of any size, or one enormous line, is read in bounded memory.
    """

    def __init__(self, offset: int, limit: int, budget: int) -> None:
        self.offset, self.limit, self.budget = offset, limit, budget
        self.out: list[str] = []
        self.used = 0
        self.full = False
        self.number = 1  # the number of the line being read
        self.line: list[str] = []
        self.line_len = 0

    @property
    def collecting(self) -> bool:
        return not self.full and len(self.out) < self.limit

    def feed(self, text: str) -> int:
        """Take decoded text; return where in it collecting stopped (len(text) if it did not)."""
        pos = 0
        while self.collecting:
            nl = text.find("\n", pos)
            piece = text[pos:] if nl < 0 else text[pos:nl]
            if self.number >= self.offset and self.line_len <= self.budget:
                take = piece[: self.budget + 1 - self.line_len]
                self.line.append(take)
                self.line_len += len(take)
            if nl < 0:
                return len(text)
            self.end_line()
            pos = nl + 1
        return pos

    def end_line(self) -> None:
        if self.number >= self.offset:
            text = "".join(self.line).rstrip("\r")
            numbered = f"{self.number:6}\t{text}"
            if self.out and self.used + len(numbered) + 1 > self.budget:
                self.full = True
            else:
                if len(numbered) > self.budget:
                    cut = self.budget
                    numbered = f"{numbered[:cut]} [... line cut at {cut} characters]"
                self.out.append(numbered)
                self.used += len(numbered) + 1
        self.number += 1
        self.line, self.line_len = [], 0


def _read_window(fd: int, offset: int, limit: int, budget: int) -> tuple[list[str], int]:
    """The numbered lines shown and the file's total number of lines."""
    window = _Lines(offset, limit, budget)
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    newlines = 0
    last = b""
    for data in chunks(fd):
        last = data[-1:]
        if not window.collecting:  # only counting lines now: no decoding
            newlines += data.count(b"\n")
            continue
        text = decoder.decode(data)
        window.feed(text)
        newlines += text.count("\n")
    unterminated = bool(last) and last != b"\n"
    if window.collecting:
        window.feed(decoder.decode(b"", final=True))
        if unterminated:  # the last line has no newline: it ends with the file
            window.end_line()
    return window.out, newlines + unterminated


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
    context = context_of(runtime)
    budget = context.max_output_chars - NOTICE_RESERVE
    with locate(context.workspace, path) as found, open_regular(found) as (fd, info):
        shown = found.rel
        if looks_binary(fd):
            raise _binary_error(shown, info)
        out, total = _read_window(fd, offset, limit, budget)
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
    return cap_output("\n".join(out), context.max_output_chars)


def _summary(verb: str, shown: str, data: bytes) -> str:
    lines = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
    return f"{verb} '{shown}' ({lines} lines, {len(data)} bytes)"


@builtin_tool
def write_file(path: str, content: str, runtime: Runtime) -> str:
    """Write a text file in the workspace, replacing it if it exists.

    Missing parent folders are created. To change part of an existing file, prefer edit_file.

    Args:
        path: File path, relative to the workspace root.
        content: The complete new text of the file.
    """
    data = content.encode("utf-8", errors="surrogateescape")
    with locate(context_of(runtime).workspace, path, create_dirs=True) as found:
        existed = write_atomic(found, data)
        return _summary("overwrote" if existed else "created", found.rel, data)


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
    with locate(context_of(runtime).workspace, path) as found:
        shown = found.rel
        with open_regular(found) as (fd, info):
            if looks_binary(fd):
                raise _binary_error(shown, info)
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
    return f"edited '{shown}' at line {line}: replaced {old_lines} line(s) with {new_lines}"


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


@builtin_tool
def list_dir(runtime: Runtime, path: str = ".") -> str:
    """List a directory of the workspace: folders first, then files, each sorted by name.

    Each entry shows its kind (dir, file, link, other), its size in bytes for files, and its name.

    Args:
        path: Directory path, relative to the workspace root.
    """
    with locate(context_of(runtime).workspace, path) as found:
        shown = found.rel
        fd = open_folder(found)
    try:
        with os.scandir(fd) as entries:
            rows = [_entry_row(entry, fd) for entry in entries]
    except OSError as exc:
        raise ToolError(f"cannot list '{shown}': {exc.strerror or exc}") from exc
    finally:
        os.close(fd)
    rows.sort(key=lambda row: (row[0], row[1].lower(), row[1]))
    lines = [f"{shown}: {len(rows)} entries"] + [row[2] for row in rows[:MAX_LIST_ENTRIES]]
    if len(rows) > MAX_LIST_ENTRIES:
        lines.append(f"[... {len(rows) - MAX_LIST_ENTRIES} more entries not shown]")
    return cap_output("\n".join(lines), context_of(runtime).max_output_chars)
