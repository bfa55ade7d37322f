"""File tools: read, write, edit and list files inside the workspace.

Every path goes through tools/paths.py `locate` (a walk beneath the workspace that follows no
link blindly) and every read or write through tools/fileio.py (descriptors, never the path).
Where the walk led is checked against the person's deny and ask rules again
(`ToolContext.protection`) before anything is opened: the review resolved the path earlier, and
a link may have changed since.
"""

from __future__ import annotations

import codecs
import os
import stat
from collections.abc import Callable

from tools.base import Runtime, ToolError, builtin_tool, context_of
from tools.context import ToolContext
from tools.fileio import (
    chunks,
    looks_binary,
    open_folder,
    open_regular,
    read_all,
    write_atomic,
)
from tools.output import cap_output
from tools.paths import Located, locate, typed_relative

DEFAULT_READ_LINES = 2000
MAX_LIST_ENTRIES = 500
MAX_EDIT_BYTES = 20_000_000  # edit_file holds the file in memory: bigger ones are refused
NOTICE_RESERVE = 200  # characters kept free for read_file's "read on" notice
COUNT_BYTES = 16 * 1024 * 1024  # read past the lines shown to count the rest, at most


def guard(context: ToolContext, tool: str, path: str) -> Callable[[Located], None]:
    """The check ``locate`` runs on where ``path`` led: refused when the person's rules
    protect it and the review did not apply them to this call (tools.context)."""

    def check(found: Located) -> None:
        typed = typed_relative(context.workspace, path)
        if refusal := context.protection(tool, found.rel, typed):
            raise ToolError(
                f"'{path}' leads to '{found.rel}', which the approval rules protect "
                f"({refusal}): {tool} does not open it"
            )

    return check


def _interrupted(tool: str) -> ToolError:
    return ToolError(f"{tool} stopped: the person interrupted the run")


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


def _read_window(
    fd: int, offset: int, limit: int, budget: int, context: ToolContext
) -> tuple[list[str], int | None]:
    """The numbered lines shown and the file's total number of lines: None when counting them
    would read more than COUNT_BYTES past the lines shown."""
    window = _Lines(offset, limit, budget)
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    newlines = 0
    counted = 0
    last = b""
    for data in chunks(fd):
        if context.cancelled():
            raise _interrupted("read_file")
        last = data[-1:]
        if not window.collecting:  # only counting lines now: no decoding
            counted += len(data)
            if counted > COUNT_BYTES:
                return window.out, None
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
    check = guard(context, "read_file", path)
    with locate(context.workspace, path, check=check) as found, open_regular(found) as (fd, info):
        shown = found.rel
        if looks_binary(fd):
            raise _binary_error(shown, info)
        out, total = _read_window(fd, offset, limit, budget, context)
    if total == 0:
        return f"'{shown}' is empty"
    if total is not None and offset > total:
        raise ToolError(f"offset {offset} is past the end of '{shown}' ({total} lines)")
    last = offset + len(out) - 1
    if total is None:
        out.append(
            f"[lines {offset}-{last} shown of a file of {info.st_size} bytes, too long to count "
            f"its lines; call read_file with offset={last + 1} to read on]"
        )
    elif last < total:
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
    context = context_of(runtime)
    check = guard(context, "write_file", path)
    with locate(context.workspace, path, create_dirs=True, check=check) as found:
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
    context = context_of(runtime)
    with locate(context.workspace, path, check=guard(context, "edit_file", path)) as found:
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
    lines = [f"{shown}: {len(rows)} entries"] + [row[2] for row in rows[:MAX_LIST_ENTRIES]]
    if len(rows) > MAX_LIST_ENTRIES:
        lines.append(f"[... {len(rows) - MAX_LIST_ENTRIES} more entries not shown]")
    if hidden:
        lines.append(f"[{hidden} more entries not shown: the approval rules protect them]")
    return cap_output("\n".join(lines), context.max_output_chars)


def _child(folder: str, name: str) -> str:
    return name if folder == "." else f"{folder}/{name}"
