"""`agentcli tools`: the tools a session would have, and the policy each gets."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from agentcli.cli.common_options import (
    ApproveOpt,
    AutoApproveOpt,
    Common,
    DenyOpt,
    common_options,
    warn,
)
from agentcli.config import Settings


@common_options()
def tools(
    as_json: Annotated[bool, typer.Option("--json", help="One JSON array of tools.")] = False,
    auto_approve: AutoApproveOpt = False,
    approve: ApproveOpt = None,
    deny: DenyOpt = None,
    *,
    common: Common,
) -> None:
    """List the tools this session would have, with their source, the policy each gets and
    the sandbox of those that start processes."""
    from agentcli.session.inspection import sandbox as session_sandbox
    from agentcli.session.inspection import tools
    from agentcli.session.setup import make_policy

    settings = common.settings()
    policy = make_policy(settings, auto_approve, approve, deny)
    sandbox = session_sandbox(settings).label()
    rows: list[dict[str, str | None]] = []
    for item in tools(settings, warn):
        verdict = policy.decide(item.name, {}, workspace=common.workspace or Path.cwd())
        rows.append(
            {
                "name": item.name,
                "source": item.source,
                "policy": verdict.decision,
                "policy_by": verdict.by,
                "description": item.summary,
                "sandbox": sandbox if _starts_processes(item.name, item.source, settings) else None,
            }
        )
    if as_json:
        print(json.dumps(rows, indent=2))  # ASCII: controls and surrogates escaped
        return
    if not rows:
        print("no tools (see [tools] in the config)")
        return
    from agentcli.ui.columns import columns

    cells = [
        (str(r["name"]), str(r["source"]), str(r["policy"]), str(r["description"])) for r in rows
    ]
    print(columns(None, cells, flex=3))
    print(f"\nsandbox: {sandbox} (shell commands and MCP stdio servers)")


def _starts_processes(name: str, source: str, settings: Settings) -> bool:
    """The shell, and the tools of MCP servers started as commands (stdio)."""
    if source == "builtin":
        return name == "shell"
    server = source.removeprefix("mcp:")
    return source.startswith("mcp:") and "command" in settings.mcp_servers.get(server, {})
