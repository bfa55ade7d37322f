"""read_file: a window of a text file's numbered lines, read in bounded memory and time."""

from __future__ import annotations

import codecs

from .base import Runtime, ToolError, builtin_tool, context_of
from .context import ToolContext
from .file_guard import binary_error, guard, interrupted
from .fileio import chunks, looks_binary, open_regular
from .output import cap_output
from .paths import locate
from .plurals import counted
from .preconditions import path_inside

DEFAULT_READ_LINES = 2000
NOTICE_RESERVE = 200  # characters kept free for read_file's "read on" notice
COUNT_BYTES = 16 * 1024 * 1024  # read past the lines shown to count the rest, at most


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
            raise interrupted("read_file")
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


@builtin_tool(precheck=path_inside)
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
            raise binary_error(shown, info)
        out, total = _read_window(fd, offset, limit, budget, context)
    if total == 0:
        return f"'{shown}' is empty"
    if total is not None and offset > total:
        raise ToolError(f"offset {offset} is past the end of '{shown}' ({counted(total, 'line')})")
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
