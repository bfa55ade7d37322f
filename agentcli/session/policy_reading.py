"""The policy as `agentcli policy` reads it without starting a session: what it decides
for one call and why, and the rules in force. A verdict for a tool the session would not
have would only mislead, so the names are checked against the tools first."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentcli.config import Settings
from agentcli.errors import ConfigError
from agentcli.session.setup import flag_problems, make_policy, tool_name_problems


def explained(
    settings: Settings,
    tool: str,
    args: dict[str, Any],
    workspace: Path,
    flags: tuple[bool, list[str] | None, list[str] | None],
    warn: Callable[[str], None],
) -> dict[str, Any]:
    """The policy's verdict for one call (`flags`: --auto-approve, --approve, --deny): the
    decision, the rule, flag or list that made it and where it came from, and for the shell
    each command the parser found. TOOL, the flags' and the config's tool names must name
    tools this session would have (a ConfigError lists every one that does not)."""
    from agentcli.agent.toolset.loading import list_tools
    from agentcli.agent.toolset.tool_names import unknown_tool, unlisted_servers
    from agentcli.policy.explanation import explain

    auto_approve, approve, deny = flags
    if found := tool_name_problems(settings, approve, deny):  # built-ins only: all at once
        raise ConfigError(*found)
    items = list_tools(settings, warn=warn)  # a config naming no tool fails here
    known = [item.name for item in items]
    unchecked = unlisted_servers(settings, (item.source for item in items))
    problems = flag_problems(known, approve, deny, unchecked)
    if why := unknown_tool(tool, known, unchecked):
        problems.insert(0, f"TOOL {tool}: {why}")
    if problems:
        raise ConfigError(*problems)
    policy = make_policy(settings, auto_approve, approve, deny)
    report = explain(policy, tool, args, settings.rules, settings.sources, workspace)
    return {**report, "hooks": hooks_for(settings, tool)}


def hooks_for(settings: Settings, tool: str) -> list[dict[str, Any]]:
    """The PreToolUse hooks a call of `tool` would be given to, in the order they would run
    (matcher, command, timeout). Named only: a check runs nothing, so what they would say,
    which may change the decision (agent/review/hook_checks.py), is not known here."""
    from agentcli.hooks.hook_set import hook_set

    hooks = hook_set(settings)
    chosen = hooks.selecting("PreToolUse", tool) if hooks is not None else []
    return [{"matcher": h.matcher, "command": h.command, "timeout": h.timeout} for h in chosen]


def rules_in_force(settings: Settings) -> list[dict[str, Any]]:
    """The config's rules in the order they are tried within each decision, each with
    where it came from."""
    from agentcli.policy.explanation import rule_rows

    return rule_rows(settings.rules, settings.sources)
