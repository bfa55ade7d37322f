"""What a command needs before it drives a session (besides its store: stores.py): its
settings, checked against the tool names they use, and the policy of the config's rules
with the command's flags on top, in the settings' approval mode. Each loads what it needs
when called: a command's start (its prompt, its errors) pays for none of it."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentcli.config import Settings, load_settings

if TYPE_CHECKING:
    from agentcli.policy.approval_policy import Policy


def checked_settings(config: Path | None, overrides: dict[str, Any]) -> Settings:
    """The settings of `config` with `overrides` (the flags) on top; a config's tool names
    are checked with its other problems, all reported at once."""
    from agentcli.agent.toolset.tool_names import settings_problems

    return load_settings(config, overrides, settings_problems)


def tool_name_problems(
    settings: Settings, approve: Collection[str] | None, deny: Collection[str] | None
) -> list[str] | None:
    """What is wrong with the tool names of the config and the flags, when the tools are the
    built-ins only (known without loading LangChain); None: only the session can tell."""
    from agentcli.agent.toolset.tool_names import settings_problems

    return settings_problems(settings, approve, deny)


def flag_problems(
    tools: Collection[str],
    approve: Collection[str] | None,
    deny: Collection[str] | None,
    unchecked: Collection[str] = (),
) -> list[str]:
    """--approve and --deny names that are no tool of `tools` (`unchecked`: tools whose
    names could not be listed, such as an MCP server's that did not start)."""
    from agentcli.agent.toolset.tool_names import flag_problems as problems

    return problems(tools, approve, deny, unchecked)


def make_policy(
    settings: Settings, auto_approve: bool, approve: list[str] | None, deny: list[str] | None
) -> Policy:
    """The config's rules with this command's flags on top, in the approval mode of the
    settings (--mode, else [approval] mode)."""
    from agentcli.agent.toolset.sandboxing import mode_box
    from agentcli.policy.approval_policy import Policy

    return Policy.build(
        settings.allow,
        settings.deny,
        settings.rules,
        flag_allow=approve or (),
        flag_deny=deny or (),
        auto_approve=auto_approve,
        mode=settings.approval_mode,
        box=mode_box(settings),
    )
