"""Approval modes: which calls need not be asked about, once no rule or flag has decided.

The policy (approval_policy.py) tries a mode last, in place of its default "ask": denials,
the flags, ask rules and allows all come first, so a deny or ask rule beats every mode. A
mode only ever allows; what it does not allow is asked, as before.

- `ask`: nothing (every call is reviewed).
- `read`: reads inside the workspace (read_file, list_dir, search_files, where the path
  leads as the file tools walk it: tools.paths), and the calculator.
- `edit`: also write_file and edit_file inside the workspace (not to a file other programs run
  on their own: autorun_files.py), when undo's snapshots are kept
  (agentcli/agent/review/mode_checks.py then asks for a write the snapshots cannot take back,
  such as one into `.git`).
- `auto`: also shell commands the sandbox confines (its mode not off, no network; no rule
  lifts it) that need nothing outside it (bash/outside_box.py), and the tools the person
  marked read-only (`[approval] read_only`). fetch_url, other MCP or custom tools, paths
  outside the workspace and commands that leave the box still ask.
- `plan`: nothing; the session asks the model for a plan, reviewed whole (agent/plan).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentcli.policy.autorun_files import runs_on_its_own

MODES = ("ask", "read", "edit", "auto", "plan")
DEFAULT_MODE = "ask"
READS = frozenset({"read_file", "list_dir", "search_files"})
WRITES = frozenset({"write_file", "edit_file"})
PURE = frozenset({"calculator"})  # touches nothing: no file, no process, no network
SHELL = "shell"
LABEL = "mode"  # a verdict by a mode is "mode NAME (what it let run)"


@dataclass(frozen=True)
class Box:
    """What the modes need to know of this run, from the settings: whether a shell command
    runs confined with no network, whether undo keeps snapshots, and the tools the person
    marked read-only. The defaults grant the least."""

    confined: bool = False
    undo: bool = False
    read_only: frozenset[str] = field(default_factory=frozenset)


def mode_grant(
    mode: str, tool: str, args: Mapping[str, Any], workspace: Path | None, box: Box
) -> str | None:
    """The verdict's `by` when `mode` lets this call run unasked ("mode read (a read inside
    the workspace)"), or None: the call is asked. Without a workspace nothing is granted."""
    if mode not in ("read", "edit", "auto") or workspace is None:
        return None
    label = f"{LABEL} {mode}"
    if tool in PURE:
        return f"{label} (a calculation)"
    if tool in READS and _inside(args, workspace):
        return f"{label} (a read inside the workspace)"
    if mode == "read":
        return None
    if tool in WRITES and box.undo and _inside(args, workspace, writing=True):
        return f"{label} (an undoable write inside the workspace)"
    if mode == "edit":
        return None
    if tool == SHELL and box.confined and shell_stays_in(args, workspace):
        return f"{label} (a confined command)"
    if tool in box.read_only:
        return f"{label} ({tool} is marked read-only in [approval] read_only)"
    return None


def shell_stays_in(args: Mapping[str, Any], workspace: Path) -> bool:
    from agentcli.policy.bash.outside_box import leaves_box

    command = args.get("command")
    return isinstance(command, str) and leaves_box(command, workspace) is None


def _inside(args: Mapping[str, Any], workspace: Path, writing: bool = False) -> bool:
    """Whether the call's path leads inside the workspace, walked as the file tools walk it
    (a link, `..`, an absolute path: where it really leads); `writing`: and to no file that
    other programs run on their own (autorun_files.py)."""
    from agentcli_tools.paths import resolve_relative

    path = args.get("path", ".")
    rel = resolve_relative(workspace, path) if isinstance(path, str) else None
    return rel is not None and not (writing and runs_on_its_own(rel))
