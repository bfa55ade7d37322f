"""A workspace file's text, read as read_file reads it: the walk of tools/paths.py (never a
link out of the workspace, never `..` above it), a regular file with one link, opened
through descriptors; binary files refused; at most `limit` bytes, the rest noted as cut."""

from __future__ import annotations

import codecs
from dataclasses import dataclass
from pathlib import Path

from agentcli_tools.errors import ToolError
from agentcli_tools.fileio import chunks, looks_binary, open_regular
from agentcli_tools.paths import locate


@dataclass(frozen=True)
class WorkspaceText:
    rel: str  # where the path led, relative to the workspace
    text: str  # UTF-8 (undecodable bytes replaced), at most `limit` bytes of the file
    size: int  # the file's size in bytes
    cut: bool  # the file is bigger than what `text` holds


def read_text(workspace: Path, path: str, limit: int) -> WorkspaceText:
    """The text of the file `path` leads to beneath the workspace; ToolError (one line)
    when it leads outside, is not a regular text file, or cannot be read."""
    with locate(workspace, path) as found, open_regular(found) as (fd, info):
        if looks_binary(fd):
            raise ToolError(f"'{found.rel}' is a binary file")
        parts: list[bytes] = []
        size = 0
        for data in chunks(fd):
            parts.append(data[: limit - size])
            size += len(parts[-1])
            if size >= limit:
                break
        rel = found.rel
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    text = decoder.decode(b"".join(parts), final=False)  # a character cut at the limit: dropped
    return WorkspaceText(rel, text, info.st_size, info.st_size > size)
