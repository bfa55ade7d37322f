"""What a person should see of a call before deciding: a diff, a command, or the arguments."""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MAX_PREVIEW_LINES = 200
# difflib's matching can take time in the product of the two sides' line counts: above this
# product (after the lines both share at the start and end) the changed lines are shown as
# one hunk, all old lines removed and all new ones added: still a true diff, not a minimal one
DIFF_WORK = 4_000_000


@dataclass
class Preview:
    kind: str  # "diff" | "shell" | "json"
    text: str


def preview(
    name: str, args: dict[str, Any], workspace: Path | None, limit: int | None = MAX_PREVIEW_LINES
) -> Preview:
    """What the review shows of a call; a diff is cut after `limit` lines (None: whole)."""
    if name == "shell" and isinstance(args.get("command"), str):
        extra = {k: v for k, v in args.items() if k != "command"}
        suffix = f"\n# {json.dumps(extra)}" if extra else ""
        return Preview("shell", args["command"] + suffix)
    if workspace and name in ("write_file", "edit_file") and isinstance(args.get("path"), str):
        diff = _file_diff(name, args, workspace, limit)
        if diff is not None:
            return Preview("diff", diff)
    return Preview("json", json.dumps(args, indent=2, ensure_ascii=False))


def _file_diff(name: str, args: dict[str, Any], workspace: Path, limit: int | None) -> str | None:
    """The diff of the file the tool will change, labelled with where the path leads (the file
    written), and a first line saying so when the path leads elsewhere than it reads."""
    from agentcli_tools.typed_paths import typed_relative

    from agentcli.session.file_preview import current_text, edited_text

    current = current_text(workspace, args["path"])
    if current is None:
        return None
    old, rel = current
    if name == "write_file":
        new = str(args.get("content", ""))
    else:
        edited = edited_text(old, str(args.get("old_text", "")), str(args.get("new_text", "")))
        if edited is None:
            return None
        new = edited
    lines = _unified_diff(
        _lines(old),
        _lines(new),
        fromfile=f"a/{rel}" if old else "/dev/null",
        tofile=f"b/{rel}",
    )
    if limit is not None and len(lines) > limit:
        more = len(lines) - limit
        lines = lines[:limit] + [f"... ({more} more lines: v at the review shows them all)\n"]
    text = "".join(_ended(line) for line in lines) or "(no change)"
    if typed_relative(workspace, args["path"]) != rel:
        text = f"# {args['path']} -> {rel} (through a link): {name} changes {rel}\n{text}"
    return text


def _lines(text: str) -> list[str]:
    """`text` cut after each newline (LF) only, as a file's lines are: CR, VT, FF, FS, GS, RS,
    NEL or U+2028 stays inside its line, where the panel shows it as a mark, not a break."""
    pieces = text.split("\n")
    return [piece + "\n" for piece in pieces[:-1]] + ([pieces[-1]] if pieces[-1] else [])


NO_NEWLINE = "\\ No newline at end of file\n"


def _ended(line: str) -> str:
    """A diff line as diff writes it: the last line of a text with no newline at its end is
    followed by diff's own note saying so (a content line always starts with " ", - or +)."""
    if line.endswith("\n"):
        return line
    return line + "\n" + (NO_NEWLINE if line[:1] in (" ", "-", "+") else "")


def _unified_diff(a: list[str], b: list[str], fromfile: str, tofile: str) -> list[str]:
    """difflib.unified_diff, in time linear in the input when the changed part is large."""
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    if head == len(a) == len(b):
        return []
    if (len(a) - head - tail) * (len(b) - head - tail) <= DIFF_WORK:
        return list(difflib.unified_diff(a, b, fromfile=fromfile, tofile=tofile))
    start = max(head - 3, 0)  # three lines of context, as unified_diff shows
    stop_a, stop_b = min(len(a) - tail + 3, len(a)), min(len(b) - tail + 3, len(b))
    hunk = f"@@ -{_range(start, stop_a)} +{_range(start, stop_b)} @@\n"
    return [
        f"--- {fromfile}\n",
        f"+++ {tofile}\n",
        hunk,
        *(" " + line for line in a[start:head]),
        *("-" + line for line in a[head : len(a) - tail]),
        *("+" + line for line in b[head : len(b) - tail]),
        *(" " + line for line in a[len(a) - tail : stop_a]),
    ]


def _range(start: int, stop: int) -> str:
    """A hunk's range as unified_diff writes it: first line (1-based), then its length."""
    length = stop - start
    if length == 1:
        return str(start + 1)
    return f"{start + 1 if length else start},{length}"
