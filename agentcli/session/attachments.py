"""`@path` in a chat message: the workspace file's content goes with the message.

A word that starts with `@` (at the start of the message or after a space) names a file when
something is there, read from the workspace as the OS would; then it is read as read_file
reads it (agentcli/agent/workspace_files.py): a path that leads outside the workspace (`..`, an
absolute path elsewhere, `~`, a link out) refuses the whole message, in one line. A word that
names nothing (`@someone`, an e-mail address, a folder) is left as typed. Trailing
punctuation (`see @a.py.`) is let go when the word with it names nothing.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from agentcli.agent.untrusted_text_fence import fence
from agentcli.errors import UsageError

if TYPE_CHECKING:
    from agentcli.agent.workspace_files import WorkspaceText

MENTION = re.compile(r"(?<!\S)@(\S+)")
TRAILING = ".,;:!?)]}'\""
MAX_BYTES = 100_000  # of one attached file
TAG = "attached_file"


def exists_as_typed(workspace: Path, path: str) -> bool:
    """Whether anything (a link too) is at `path` as the operating system reads it from the
    workspace: what tells `@name` meant as a file from `@someone` meant as a name."""
    try:
        return os.path.lexists(workspace / Path(path).expanduser())
    except (OSError, ValueError):
        return False


def _named(workspace: Path, word: str) -> str | None:
    """The path the word names (itself, or without trailing punctuation), if any."""
    for path in dict.fromkeys((word, word.rstrip(TRAILING))):
        if path and exists_as_typed(workspace, path):
            typed = workspace / Path(path).expanduser()
            return None if os.path.isdir(typed) and not os.path.islink(typed) else path
    return None


def attach(text: str, workspace: Path) -> tuple[str, list[WorkspaceText]]:
    """The message with each `@path` file's content added, fenced; and the files attached.
    UsageError when a named file may not or cannot be attached (nothing is sent)."""
    named = [path for m in MENTION.finditer(text) if (path := _named(workspace, m.group(1)))]
    if not named:
        return text, []
    from agentcli_tools.base import ToolError

    from agentcli.agent.workspace_files import read_text  # LangChain, through tools.base: only now

    files: dict[str, WorkspaceText] = {}
    for path in named:
        try:
            found = read_text(workspace, path, MAX_BYTES)
        except ToolError as exc:
            raise UsageError(f"@{path} not attached: {exc} (nothing was sent)") from None
        files.setdefault(found.rel, found)
    if not files:
        return text, []
    blocks = []
    for found in files.values():
        note = f"\n[cut: the file is {found.size:,} bytes; this is its first {MAX_BYTES:,}]"
        blocks.append(fence(TAG, found.text + (note if found.cut else ""), path=found.rel))
    return text + "\n\n" + "\n\n".join(blocks), list(files.values())
