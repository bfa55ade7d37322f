"""`agentcli tools`: the tools a session would have, and the policy each gets."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from agentcli.cli.common import (
    ApproveOpt,
    AutoApproveOpt,
    BaseUrlOpt,
    Common,
    ConfigOpt,
    DbOpt,
    DenyOpt,
    ModelOpt,
    WorkspaceOpt,
    make_policy,
)


def tools(
    as_json: Annotated[bool, typer.Option("--json", help="One JSON array of tools.")] = False,
    auto_approve: AutoApproveOpt = False,
    approve: ApproveOpt = None,
    deny: DenyOpt = None,
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
    db: DbOpt = None,
    config: ConfigOpt = None,
    workspace: WorkspaceOpt = None,
) -> None:
    """List the tools this session would have, with the policy each gets."""
    from tools.registry import builtin_tools

    settings = Common(model, base_url, db, config, workspace).settings()
    policy = make_policy(settings, auto_approve, approve, deny)
    rows = []
    for tool in builtin_tools():
        verdict = policy.decide(tool.name, {})
        summary = (tool.description or "").strip().splitlines()[0] if tool.description else ""
        rows.append(
            {
                "name": tool.name,
                "source": "builtin",
                "policy": verdict.decision,
                "policy_by": verdict.by,
                "description": summary,
            }
        )
    if as_json:
        print(json.dumps(rows, indent=2))
        return
    width = max(len(row["name"]) for row in rows)
    for row in rows:
        print(f"{row['name']:<{width}}  {row['policy']:<5}  {row['description']}")
