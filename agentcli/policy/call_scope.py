"""The rule `A` proposes at a review: scoped to the call's main argument, never the whole tool.

- shell: what bash/program_table.py says the program does with its arguments. A program
  none of whose arguments runs code or writes files gets its name (and subcommand) and a
  `*`: `ls -la` gives `ls *`, `git status --short` gives `git status*` (which the next bare
  `git status` fits too); a bare `ls` gives `ls` (`ls*` would fit `lsof`). A program some
  argument of which runs code or writes files (sed, tar, make, sort, cp, git with `-c` or
  `--output`, an interpreter, a wrapper, `rm`...) gets the exact command: any wider rule
  would let through a line that does what the approved one did not. So does a program the
  table does not know (`cargo test --release`: its options may run anything), and a chain
  of different commands.
- file tools: the folder the path is in (`src/*`; `*` at the workspace root).
- fetch_url (and other tools with a `url`): the host, which is what URL rules match.
- other tools with a `path`: its folder; with neither: None (the whole tool, as before).

`fits` says whether such a rule matches a call, exactly as the policy would decide it.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentcli_tools.urls import host_of

from agentcli.policy.allow_all import allows_everything
from agentcli.policy.approval_policy import Policy, Rule
from agentcli.policy.bash.program_arguments import program
from agentcli.policy.rule_subjects import FILE_TOOLS


def escape(text: str) -> str:
    """`text` as an fnmatch pattern that matches only itself."""
    return re.sub(r"([*?\[])", r"[\1]", text)


def proposed_match(tool: str, args: Mapping[str, Any], workspace: Path | None) -> str | None:
    """The match `A` offers for this call, or None when the tool has no subject to scope."""
    if tool == "shell":
        return _shell_match(str(args.get("command", "")))
    url = args.get("url")
    if isinstance(url, str) and tool not in FILE_TOOLS:
        host = host_of(url)
        return escape(host) if host else None
    path = args.get("path")
    if isinstance(path, str) or tool in FILE_TOOLS:
        return _folder_match(str(path if isinstance(path, str) else "."), workspace)
    return None


def fits(
    tool: str, match: str | None, call_tool: str, args: Mapping[str, Any], workspace: Path | None
) -> bool:
    """Whether an allow rule for `tool` with `match` (None: the whole tool) allows the call."""
    if call_tool != tool:
        return False
    if match is None:
        return True
    policy = Policy(rules=(Rule(tool, "allow", match),))
    return policy.decide(call_tool, args, workspace=workspace).decision == "allow"


def _shell_match(command: str) -> str:
    from agentcli.policy.shell_rules import simple_commands

    exact = escape(command.strip())
    parts = simple_commands(command)
    if not parts:
        return exact
    words = [shlex.split(part) for part in parts]
    first = words[0]
    entry, named = program(first)
    if entry is None or entry.runs or entry.writes:
        return exact  # what its arguments may do is more than the approved line did
    scoped = first[:named]
    if any(w[: len(scoped)] != scoped for w in words[1:]):
        return exact  # a chain of different commands: one pattern would allow too much
    text = " ".join(escape(shlex.quote(w)) for w in scoped)
    if len(scoped) > 1:  # after a subcommand: the bare one and its options alike
        match = f"{text}*"
    elif any(len(w) == 1 for w in words):
        return exact  # `ls*` would fit `lsof` and `du*` `dump`: other programs
    else:
        match = f"{text} *"
    if allows_everything("shell", match, "allow"):
        return exact
    return match


def _folder_match(path: str, workspace: Path | None) -> str:
    rel: str | None = None
    if workspace is not None:
        from agentcli_tools.paths import resolve_relative

        rel = resolve_relative(workspace, path)
    if rel is None:
        rel = posixpath.normpath(path)
    folder = posixpath.dirname(rel.rstrip("/"))
    return "*" if folder in ("", ".", "/") else f"{escape(folder)}/*"
