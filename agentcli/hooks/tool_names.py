"""agentcli's tools under Claude Code's names and argument names, so that the matchers and
scripts written for Claude Code's hooks read agentcli's calls as they read its own:

    agentcli                          Claude Code (tool_name, tool_input)
    shell(command, timeout?)          Bash {command, timeout (milliseconds)}
    read_file(path, offset?, limit?)  Read {file_path (absolute), offset, limit}
    write_file(path, content)         Write {file_path (absolute), content}
    edit_file(path, old_text, new_text)  Edit {file_path (absolute), old_string, new_string}
    fetch_url(url)                    WebFetch {url}
    search_files(pattern, path, glob?)   Grep {pattern, path (absolute), glob}
    list_dir(path)                    LS {path (absolute)}

Any other tool (MCP, calculator, your own) keeps its name and arguments. A hook's
`updatedInput` is read back the same way: a path it left as it was given keeps the model's
own argument; another absolute path inside the workspace becomes relative to it (the file
tools refuse absolute paths); the policy then decides on what the hook wrote.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

CLAUDE_NAMES = {
    "shell": "Bash",
    "read_file": "Read",
    "write_file": "Write",
    "edit_file": "Edit",
    "fetch_url": "WebFetch",
    "search_files": "Grep",
    "list_dir": "LS",
}
# agentcli's argument: Claude Code's, for each tool whose names differ
_RENAMED = {
    "read_file": {"path": "file_path"},
    "write_file": {"path": "file_path"},
    "edit_file": {"path": "file_path", "old_text": "old_string", "new_text": "new_string"},
}
_PATHS = {"file_path", "path"}  # Claude Code gives these absolute
_DROPPED = {"description", "prompt"}  # Claude Code's own keys agentcli's tools do not take
_MS = 1000  # Bash's timeout is in milliseconds, shell's in seconds


def claude_name(tool: str) -> str:
    return CLAUDE_NAMES.get(tool, tool)


def claude_input(tool: str, args: Mapping[str, Any], workspace: Path) -> dict[str, Any]:
    """The call's arguments as Claude Code's tool of that name takes them."""
    if tool not in CLAUDE_NAMES:
        return dict(args)
    renamed = _RENAMED.get(tool, {})
    out: dict[str, Any] = {}
    for key, value in args.items():
        name = renamed.get(key, key)
        if name in _PATHS and isinstance(value, str):
            value = _absolute(value, workspace)
        elif tool == "shell" and key == "timeout" and isinstance(value, int | float):
            value = value * _MS
        out[name] = value
    if tool in ("list_dir", "search_files") and "path" not in out:
        out["path"] = _absolute(".", workspace)  # the default the tool applies
    return out


def agentcli_input(
    tool: str, updated: Mapping[str, Any], args: Mapping[str, Any], workspace: Path
) -> dict[str, Any]:
    """A hook's `updatedInput` for this call, as agentcli's tool takes it (`args`: the
    call's own, whose paths are kept where the hook did not change them)."""
    if tool not in CLAUDE_NAMES:
        return dict(updated)
    back = {claude: ours for ours, claude in _RENAMED.get(tool, {}).items()}
    sent = claude_input(tool, args, workspace)
    out: dict[str, Any] = {}
    for key, value in updated.items():
        if key in _DROPPED:
            continue
        name = back.get(key, key)
        if key in _PATHS and isinstance(value, str):
            value = args.get(name, ".") if value == sent.get(key) else _relative(value, workspace)
        elif tool == "shell" and key == "timeout" and isinstance(value, int | float):
            value = value / _MS
        out[name] = value
    return out


def _absolute(path: str, workspace: Path) -> str:
    return path if os.path.isabs(path) else os.path.normpath(os.path.join(workspace, path))


def _relative(path: str, workspace: Path) -> str:
    """An absolute path inside the workspace (as written: no link followed) made relative to
    it; any other path as it is (the tools refuse what leads outside)."""
    if not os.path.isabs(path):
        return path
    inside = os.path.relpath(os.path.normpath(path), workspace)
    return path if inside == ".." or inside.startswith("../") else inside
