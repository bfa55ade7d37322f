"""What goes with a chat message: the workspace files its `@path` words name, and the output
of the person's own `!command`s, each fenced as untrusted text; and how much of a message a
thread takes (over_bound: agent/input_bounds.py clips the rest).

A word that starts with `@` (at the start of the message or after a space) names a file when
something is there, read from the workspace as the OS would; then it is read as read_file
reads it (agentcli/agent/workspace_files.py): a path that leads outside the workspace (`..`, an
absolute path elsewhere, `~`, a link out) refuses the whole message, in one line. A word that
names nothing (`@someone`, a folder) is left as typed, and the chat says that nothing was
attached for it (an e-mail address is no `@` word). Trailing
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
MAX_SHELL_OUTPUT = 20_000  # characters of a `!command`'s output kept: the end of it
SHELL_TAG = "shell_output"


def shell_output(command: str, exit_code: int, output: str) -> str:
    """The fenced block of a `!command`'s output that the next message carries."""
    if len(output) > MAX_SHELL_OUTPUT:
        kept = f"[only the last {MAX_SHELL_OUTPUT:,} characters]\n"
        output = kept + output[-MAX_SHELL_OUTPUT:]
    return fence(SHELL_TAG, output, command=command, exit_code=exit_code)


def exists_as_typed(workspace: Path, path: str) -> bool:
    """Whether anything (a link too) is at `path` as the operating system reads it from the
    workspace: what tells `@name` meant as a file from `@someone` meant as a name."""
    try:
        return os.path.lexists(workspace / Path(path).expanduser())
    except (OSError, ValueError):
        return False


def _named(workspace: Path, word: str) -> tuple[str | None, str]:
    """The path the word names (itself, or without trailing punctuation), if any; else
    why nothing is attached for it."""
    for path in dict.fromkeys((word, word.rstrip(TRAILING))):
        if path and exists_as_typed(workspace, path):
            typed = workspace / Path(path).expanduser()
            if os.path.isdir(typed) and not os.path.islink(typed):
                return None, "a folder, not a file"
            return path, ""
    return None, "no such file in the workspace"


def attach(text: str, workspace: Path) -> tuple[str, list[WorkspaceText], list[str]]:
    """The message with each `@path` file's content added, fenced; the files attached; and
    for each `@word` that named no file, `@word: why` (the chat says nothing was attached).
    UsageError when a named file may not or cannot be attached (nothing is sent)."""
    named: list[str] = []
    unknown: list[str] = []
    for mention in MENTION.finditer(text):
        path, why = _named(workspace, mention.group(1))
        if path:
            named.append(path)
        elif (note := f"{mention.group(0)}: {why}") not in unknown:
            unknown.append(note)
    if not named:
        return text, [], unknown
    from agentcli_tools.errors import ToolError

    from agentcli.agent.workspace_files import read_text  # LangChain, through tools.base: only now

    files: dict[str, WorkspaceText] = {}
    for path in named:
        try:
            found = read_text(workspace, path, MAX_BYTES)
        except ToolError as exc:
            raise UsageError(f"@{path} not attached: {exc} (nothing was sent)") from None
        files.setdefault(found.rel, found)
    if not files:
        return text, [], unknown
    blocks = []
    for found in files.values():
        note = f"\n[cut: the file is {found.size:,} bytes; this is its first {MAX_BYTES:,}]"
        blocks.append(fence(TAG, found.text + (note if found.cut else ""), path=found.rel))
    return text + "\n\n" + "\n\n".join(blocks), list(files.values()), unknown


MAX_COMPLETIONS = 200
MAX_SCANNED = 20_000  # entries of one folder read for a completion


def completions(workspace: Path, typed: str) -> list[str]:
    """The workspace paths that `@typed` may be completed to (a folder ends in `/`), for
    Tab in the chat's input. Only inside the workspace, as attach reads it: nothing for a
    path that starts outside it (`/`, `~`, `..`) or goes through a link that leads out;
    names that would not show as themselves (controls, invisible characters) or hold a
    blank (an `@path` is one word) are not offered; dot files only when `.` is typed."""
    from agentcli.terminal_text import line

    folder, _, prefix = typed.rpartition("/")
    parts = [part for part in folder.split("/") if part]
    if typed.startswith(("/", "~")) or ".." in parts:
        return []
    root = os.path.realpath(workspace)
    base = os.path.realpath(os.path.join(root, *parts))
    if base != root and not base.startswith(root + os.sep):
        return []  # a link out of the workspace
    found: list[str] = []
    try:
        with os.scandir(base) as entries:
            for seen, entry in enumerate(entries):
                if seen >= MAX_SCANNED:  # a huge folder: Tab stays quick
                    break
                name = entry.name
                if not name.startswith(prefix) or (name[0] == "." and not prefix.startswith(".")):
                    continue
                if line(name) != name or any(char.isspace() for char in name):
                    continue
                slash = "/" if entry.is_dir(follow_symlinks=True) else ""
                found.append(f"{folder}/{name}{slash}" if folder else f"{name}{slash}")
    except OSError:
        return []
    return sorted(found)[:MAX_COMPLETIONS]


def over_bound(text: str) -> tuple[int, int] | None:
    """A message's size and the most of it a thread takes, in bytes of UTF-8, when it is
    over that (the model gets its start and a note); None when it fits."""
    from agentcli.agent.input_bounds import MAX_MESSAGE_BYTES, clipped

    if clipped(text) is text:
        return None
    return len(text.encode("utf-8", "surrogatepass")), MAX_MESSAGE_BYTES
