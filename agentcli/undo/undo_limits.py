"""What the review says about a call whose changes the snapshots cannot take back."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentcli.errors import SnapshotError
from agentcli.policy.bash.read_only import only_reads
from agentcli.undo.call_snapshots import READ_ONLY_TOOLS, WorkspaceSnapshots
from agentcli.undo.git_own_paths import nested_repository, writes_into_git

FILE_TOOLS = ("write_file", "edit_file")
SHELL = "shell"
NAMED = 3  # files named per kind in the note, then "..."
_TOKENS = re.compile(r"[^\s;|&<>()'\"`=]+")  # what may be a path in a command line
MAX_TOKENS = 200


def undo_limit(
    snapshots: WorkspaceSnapshots | None,
    workspace: Path,
    tool: str,
    args: Mapping[str, Any],
    confined: bool,
    writable: tuple[str, ...] = (),
) -> str | None:
    """Why the changes of this call could not all be undone (the review shows it after
    "cannot be undone: "), or None when they could. `confined`: a shell call runs in the
    sandbox, which lets it write in the workspace and `writable` only."""
    if tool in READ_ONLY_TOOLS:
        return None
    if snapshots is None:
        return "no snapshots are kept ([undo] snapshots = false)"
    if tool == SHELL:
        command = str(args.get("command", ""))
        if only_reads(command):  # nothing it runs writes: there is nothing to undo
            return None
        return _shell_limit(snapshots, workspace, command, confined, writable)
    if tool not in FILE_TOOLS:
        return f"{tool} is not a built-in tool: what it changes outside the workspace stays changed"
    rel = str(args.get("path", ""))
    if writes_into_git(workspace, rel):
        return (
            f"{rel} is inside a .git folder, which the snapshots never keep: what it writes"
            " there (a hook, a config) stays after undo"
        )
    if folder := nested_repository(workspace, rel):
        return f"{rel} is in {folder}/, a repository of its own, whose files are not kept"
    if Path(rel).name == ".gitignore":  # what it ignores from now on is no longer kept
        return f"later changes to files {rel} newly ignores (it decides what the snapshots keep)"
    return _file_limit(snapshots, workspace, rel, args)


def _shell_limit(
    snapshots: WorkspaceSnapshots,
    workspace: Path,
    command: str,
    confined: bool,
    writable: tuple[str, ...],
) -> str:
    """Always something: what a command changes in ignored files, files over the size cap
    and git's own files is never kept, whatever the sandbox."""
    said = []
    if not confined:
        said.append("the sandbox is off, so files it changes outside the workspace stay changed")
    elif writable:
        said.append(f"files it changes in [sandbox] writable ({', '.join(writable)}) stay changed")
    git, nested = _git_paths(workspace, command)
    if git:
        said.append(f"it names {_few(git)} inside a .git folder: what it writes there stays")
    if nested:
        said.append(f"it names files in {_few(nested)}, a repository of its own: not kept")
    repo = snapshots.repo(workspace)
    try:
        ignored = repo.ignored_entries()
    except SnapshotError:
        return "; ".join([*said, "git is not installed, so no snapshot is kept"])
    cap = _megabytes(snapshots.max_file_bytes)
    said.append(
        f"changes to ignored files{_listed(ignored)}, files over {cap}"
        f"{_listed(repo.known_big())} and files inside .git folders are not kept"
    )
    return "; ".join(said)


def _git_paths(workspace: Path, command: str) -> tuple[list[str], list[str]]:
    """The paths the command line names (its words as written, and as bash reads them)
    that lie inside a .git folder, and the repositories of their own it names files in."""
    git: list[str] = []
    nested: list[str] = []
    root = str(workspace.resolve())
    for word in command_words(command):
        rel = word[len(root) + 1 :] if word.startswith(root + "/") else word
        if writes_into_git(workspace, rel):
            git.append(word)
        elif folder := nested_repository(workspace, rel):
            nested.append(folder + "/")
    return git, list(dict.fromkeys(nested))


def command_words(command: str) -> list[str]:
    """What may be a path in a command line: its words as written, and as bash reads them
    (at most MAX_TOKENS, each once)."""
    from agentcli.policy.bash.parse import analyse

    words = _TOKENS.findall(command)
    for found in analyse(command).commands:
        words += [t for w in found.words if w for t in _TOKENS.findall(w)]
    return list(dict.fromkeys(words))[:MAX_TOKENS]


def _few(names: list[str]) -> str:
    return ", ".join(names[:NAMED]) + (", ..." if len(names) > NAMED else "")


def _listed(names: list[str]) -> str:
    return f" ({_few(names)})" if names else ""


def _file_limit(
    snapshots: WorkspaceSnapshots, workspace: Path, rel: str, args: Mapping[str, Any]
) -> str | None:
    cap = snapshots.max_file_bytes
    target = workspace / rel
    try:
        size = target.stat().st_size if target.is_file() else 0
    except OSError:
        size = 0
    content = args.get("content")
    written = len(content.encode("utf-8", "replace")) if isinstance(content, str) else 0
    if max(size, written) > cap:
        return f"{rel} is over the {_megabytes(cap)} snapshot limit ([undo] max_file_mb)"
    repo = snapshots.repo(workspace)
    try:
        repo.ensure()
        if repo.ignored(rel):
            return f"{rel} is ignored (.gitignore), so it is not in the snapshots"
    except SnapshotError:
        return "git is not installed, so no snapshot is kept"
    return None


def _megabytes(count: int) -> str:
    return f"{count / 1_000_000:g} MB"
