"""`agentcli tools`: the tools a session would have, and the policy each gets."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from agentcli.cli.common import (
    ApproveOpt,
    AutoApproveOpt,
    Common,
    DenyOpt,
    common_options,
    make_policy,
    warn,
)


@common_options()
def tools(
    as_json: Annotated[bool, typer.Option("--json", help="One JSON array of tools.")] = False,
    auto_approve: AutoApproveOpt = False,
    approve: ApproveOpt = None,
    deny: DenyOpt = None,
    *,
    common: Common,
) -> None:
    """List the tools this session would have, with their source and the policy each gets."""
    from agentcli.toolset import list_tools

    settings = common.settings()
    policy = make_policy(settings, auto_approve, approve, deny)
    rows = []
    for item in list_tools(settings, warn=warn):
        verdict = policy.decide(item.name, {}, workspace=common.workspace or Path.cwd())
        rows.append(
            {
                "name": item.name,
                "source": item.source,
                "policy": verdict.decision,
                "policy_by": verdict.by,
                "description": item.summary,
            }
        )
    if as_json:
        print(json.dumps(rows, indent=2))  # ASCII: controls and surrogates escaped
        return
    if not rows:
        print("no tools (see [tools] in the config)")
        return
    from agentcli.ui.columns import columns

    cells = [(r["name"], r["source"], r["policy"], r["description"]) for r in rows]
    print(columns(None, cells, flex=3))
