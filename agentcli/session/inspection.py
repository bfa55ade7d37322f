"""What a session with these settings would use, for the commands that show it without
starting one (`doctor`, `tools`, `config show`): its tools, the sandbox of the commands it
runs, the model server's endpoint, the workspace's project instructions, and where each
MCP server's stderr goes. Each loads what it needs when called."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from agentcli.config import Settings

if TYPE_CHECKING:
    from agentcli_tools.sandbox import Sandbox

    from agentcli.agent.toolset.loading import ToolEntry
    from agentcli.agent.workspace_files import WorkspaceText


def tools(settings: Settings, warn: Callable[[str], None]) -> list[ToolEntry]:
    """The tools a session would have (MCP servers started to list theirs); a config that
    names no tool is a ConfigError."""
    from agentcli.agent.toolset.loading import list_tools

    return list_tools(settings, warn=warn)


def sandbox(settings: Settings) -> Sandbox:
    """The sandbox confined commands would get ([sandbox] mode)."""
    from agentcli.agent.toolset.sandboxing import sandbox_of

    return sandbox_of(settings)


def model_endpoint(settings: Settings) -> str:
    """The base URL the model client would call."""
    from agentcli.agent.model.chat_model import endpoint

    return endpoint(settings)


def project_instructions(
    workspace: Path,
) -> tuple[Path, WorkspaceText | None, str | None, int]:
    """The workspace's AGENTS.md: its path, the text the system prompt would get (None:
    there is none) or why it is not used, and the most bytes of it the model gets."""
    from agentcli.agent import agents_md

    found, problem = agents_md.load(workspace)
    return workspace / agents_md.FILE, found, problem, agents_md.MAX_BYTES


def mcp_log(name: str) -> Path:
    """Where the stdio MCP server `name` writes its stderr."""
    from agentcli.agent.toolset.mcp.logs import log_path

    return log_path(name)
