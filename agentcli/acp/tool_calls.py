"""A tool call as an editor shows it: its title, kind, arguments, the diff of a file it
writes, and its result. Everything here is the model's or a tool's text, and untrusted:
one-line fields have their controls and newlines shown as marks (terminal_text.line), and
the editor gets it as data, never as a choice (permission_options.py makes those)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from acp.helpers import (
    start_tool_call,
    text_block,
    tool_content,
    tool_diff_content,
    update_tool_call,
)
from acp.schema import ToolCallLocation, ToolCallProgress, ToolCallStart, ToolCallUpdate

from agentcli.session.file_preview import current_text, edited_text
from agentcli.session.inbox import main_argument
from agentcli.terminal_text import dumps, line

TITLE_CHARS = 160
RESULT_CHARS = 64_000  # of a result or of a command's live output, the end kept
KINDS = {
    "read_file": "read",
    "list_dir": "read",
    "search_files": "search",
    "write_file": "edit",
    "edit_file": "edit",
    "shell": "execute",
    "fetch_url": "fetch",
    "calculator": "think",
    "plan": "think",
}


def title(name: str, args: Any) -> str:
    """`shell: git status`, on one line, clipped."""
    text = line(f"{name}: {main_argument(name, args)}")
    return text if len(text) <= TITLE_CHARS else text[: TITLE_CHARS - 1] + "…"


def started(call: dict[str, Any], workspace: Path | None) -> ToolCallStart:
    """The call as the model proposed it, before any decision (pending)."""
    name, args = str(call.get("name")), call.get("args")
    content, where = _file_change(name, args, workspace)
    return start_tool_call(
        str(call.get("id")),
        title(name, args),
        kind=KINDS.get(name, "other"),  # type: ignore[arg-type]
        status="pending",
        content=content,
        locations=where,
        raw_input=args,
    )


def asked(request: dict[str, Any], workspace: Path | None) -> ToolCallUpdate:
    """The call a permission request is about, as it will run."""
    name, args = str(request.get("name")), request.get("args")
    content, where = _file_change(name, args, workspace)
    if content is None:  # the whole call, not only its title: the title is clipped
        content = [tool_content(text_block(_fenced(name, args)))]
    notes = [
        f"{label}: {request[key]}"
        for key, label in (("sandbox", "runs in the sandbox"), ("undo", "cannot be undone"))
        if request.get(key)
    ]
    if request.get("hook"):
        notes.append(f"hooks: {request['hook']}")
    content = [*(content or []), *(tool_content(text_block(n)) for n in notes)]
    return ToolCallUpdate(
        tool_call_id=str(request.get("id")),
        title=title(name, args),
        kind=KINDS.get(name, "other"),  # type: ignore[arg-type]
        status="pending",
        content=content or None,
        locations=where,
        raw_input=args,
    )


def running(call_id: str) -> ToolCallProgress:
    return update_tool_call(call_id, status="in_progress")


def output(call_id: str, text: str) -> ToolCallProgress:
    """A running command's output so far (its end, if long)."""
    return update_tool_call(
        call_id, status="in_progress", content=[tool_content(text_block(_tail(text)))]
    )


def finished(call_id: str, content: str, failed: bool) -> ToolCallProgress:
    """What the model reads for the call: its result, its error, its rejection."""
    return update_tool_call(
        call_id,
        status="failed" if failed else "completed",
        content=[tool_content(text_block(_tail(content)))],
        raw_output=_tail(content),
    )


def _fenced(name: str, args: Any) -> str:
    """The call's arguments as a Markdown code block (a shell command as itself), fenced
    longer than any run of backticks inside, so no text of the model's ends it early."""
    if name == "shell" and isinstance(args, dict) and isinstance(args.get("command"), str):
        body, kind = args["command"], "sh"
    else:
        body, kind = dumps(args, indent=2), "json"
    fence = "`" * max(3, 1 + max((len(run) for run in re.findall("`+", body)), default=0))
    return f"{fence}{kind}\n{body}\n{fence}"


def _tail(text: str) -> str:
    if len(text) <= RESULT_CHARS:
        return text
    return f"[… {len(text) - RESULT_CHARS:,} characters before]\n" + text[-RESULT_CHARS:]


def _file_change(
    name: str, args: Any, workspace: Path | None
) -> tuple[list[Any] | None, list[ToolCallLocation] | None]:
    """For write_file and edit_file, the file's diff as the tool would make it (the file read
    as the tool reads it: nothing outside the workspace) and where it is; else nothing."""
    if name not in ("write_file", "edit_file") or workspace is None or not isinstance(args, dict):
        return None, None
    if not isinstance(args.get("path"), str):
        return None, None
    current = current_text(workspace, args["path"])
    if current is None:
        return None, None
    old, rel = current
    if name == "write_file":
        new: str | None = str(args.get("content", ""))
    else:
        new = edited_text(old, str(args.get("old_text", "")), str(args.get("new_text", "")))
    if new is None:
        return None, None
    path = str(workspace / rel)
    return [tool_diff_content(path, new, old or None)], [ToolCallLocation(path=path)]
