"""What a rule's `match` is tested against, and how: a shell command's parts, a file tool's
path (where it leads, and as typed), a URL's host; and which patterns can never match.

The subject is chosen by the tool, never by the keys its arguments happen to have: shell, the
command; the file tools, the path; fetch_url, the URL's host; other tools, their `url`
argument's host and their `path` argument (deny: either; allow: both).
"""

from __future__ import annotations

import fnmatch
import posixpath
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from agentcli_tools.urls import host_of, host_pattern

Decision = Literal["allow", "ask", "deny"]

FETCH_TOOL = "fetch_url"
FILE_TOOLS = {"read_file", "write_file", "edit_file", "list_dir", "search_files"}


def fits(part: str, pattern: str | None) -> bool:
    return pattern is not None and fnmatch.fnmatchcase(part, pattern)


def on_files(tool_pattern: str) -> bool:
    """Whether a rule for `tool_pattern` is written for (any) file tool."""
    return any(fnmatch.fnmatchcase(name, tool_pattern) for name in FILE_TOOLS)


def path_rule_matches(
    args: Mapping[str, Any], pattern: str, decision: Decision, workspace: Path | None
) -> bool:
    """Does a rule's glob match a file tool's path? Fails closed: an allow needs the path to
    resolve inside the workspace; a deny or ask matches where it leads or as it is typed.

    The path is walked as the tools walk it (tools.paths.locate), so where the policy sees it
    lead is where the tool opens it; a path the walk refuses (outside, ``..`` after a missing
    name, too many links) is refused by the tool too, and is matched as typed only. What
    changes on disk between this review and the run is checked again by the tool
    (``Policy.protection``).
    """
    from agentcli_tools.path_globs import path_matches
    from agentcli_tools.paths import resolve_relative
    from agentcli_tools.typed_paths import typed_relative

    typed = str(args.get("path", "."))
    glob = file_glob(pattern, workspace)
    if glob is None:
        return False
    if workspace is None:
        return decision != "allow" and path_matches(posixpath.normpath(typed), glob, protect=True)
    resolved = resolve_relative(workspace, typed)
    if decision == "allow":
        return resolved is not None and path_matches(resolved, glob, protect=False)
    subjects = [typed_relative(workspace, typed)]
    if resolved is not None:
        subjects.append(resolved)
    return any(path_matches(subject, glob, protect=True) for subject in subjects)


def file_glob(pattern: str, workspace: Path | None) -> str | None:
    """A path rule's glob as it is matched: relative to the workspace. One written as an
    absolute path under the workspace is made relative; one elsewhere matches nothing (None),
    as no file tool opens anything outside."""
    if workspace is None or not pattern.startswith("/"):
        return pattern
    from agentcli_tools.typed_paths import workspace_relative

    relative = workspace_relative(pattern, workspace)
    return None if relative is None else posixpath.normpath(relative or ".")


def subject_matches(tool: str, args: Mapping[str, Any], pattern: str, decision: Decision) -> bool:
    """A rule's pattern against the call's subjects, which the tool decides: fetch_url's is
    its URL's host (tools.urls.host_of: None when the URL is refused, matching nothing).
    Other tools (MCP, custom) declare none, so their `url` argument's host and their `path`
    argument (normalised as typed) both are, and an added argument never helps a call: a
    deny or ask rule matches when any subject does, an allow rule only when all do. Shell
    and the file tools are matched by their own functions."""
    hits: list[bool] = []
    url = args.get("url")
    if isinstance(url, str) or tool == FETCH_TOOL:
        host = host_of(str(url))
        hits.append(host is not None and fnmatch.fnmatchcase(host, host_pattern(pattern)))
    path = args.get("path")
    if tool != FETCH_TOOL and isinstance(path, str):
        hits.append(fnmatch.fnmatchcase(posixpath.normpath(path), pattern))
    return bool(hits) and all(hits) if decision == "allow" else any(hits)


def rule_problem(tool: str, match: str) -> str | None:
    """Why a rule's pattern can never match what its tools are matched on, with the fix, or
    None. Only rules aimed at one kind of subject are checked (a `tool = "*"` rule is not):
    fetch_url rules match the host alone (no scheme, path or port), file rules a normalised
    workspace-relative path (no `..`)."""
    kinds = {
        "url": fnmatch.fnmatchcase(FETCH_TOOL, tool),
        "file": any(fnmatch.fnmatchcase(name, tool) for name in FILE_TOOLS),
        "shell": fnmatch.fnmatchcase("shell", tool),
    }
    if kinds == {"url": True, "file": False, "shell": False}:
        port = match.count(":") == 1 or "]:" in match  # host:port (an IPv6 address has more)
        if port or any(c in "/@\\" or c.isspace() for c in match):
            return (
                f"match {match!r} is not a host: fetch_url rules match the URL's host only; "
                'write the host, e.g. match = "example.com" or "*.example.com"'
            )
    if kinds == {"url": False, "file": True, "shell": False}:
        if ".." in match.strip().split("/"):
            return (
                f"match {match!r} can never match: file rules match the path where it leads, "
                'relative to the workspace, without ".."; write it that way, e.g. "secrets/*"'
            )
    return None
