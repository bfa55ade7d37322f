"""`agentcli tools`: the tools a session would have, and the policy each gets."""

from __future__ import annotations

import json
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
    from agentcli.toolset import load_tools

    settings = common.settings()
    policy = make_policy(settings, auto_approve, approve, deny)
    rows = []
    for item in load_tools(settings, warn=warn):
        verdict = policy.decide(item.name, {})
        description = (item.tool.description or "").strip()
        rows.append(
            {
                "name": item.name,
                "source": item.source,
                "policy": verdict.decision,
                "policy_by": verdict.by,
                "description": description.splitlines()[0] if description else "",
            }
        )
    if as_json:
        print(json.dumps(rows, indent=2))
        return
    if not rows:
        print("no tools (see [tools] in the config)")
        return
    name_width = max(len(row["name"]) for row in rows)
    source_width = max(len(row["source"]) for row in rows)
    for row in rows:
        print(
            f"{row['name']:<{name_width}}  {row['source']:<{source_width}}  {row['policy']:<5}"
            f"  {row['description']}"
        )
