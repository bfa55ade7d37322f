"""`agentcli threads ...`: thread management (the index is read without loading checkpoints)."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from agentcli.cli.common import BaseUrlOpt, Common, ConfigOpt, DbOpt, ModelOpt, WorkspaceOpt

app = typer.Typer(help="List and manage threads.", no_args_is_help=True)


@app.command("list")
def list_threads(
    as_json: Annotated[bool, typer.Option("--json", help="One JSON array of threads.")] = False,
    limit: Annotated[int | None, typer.Option("--limit", "-n", help="Newest N only.")] = None,
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
    db: DbOpt = None,
    config: ConfigOpt = None,
    workspace: WorkspaceOpt = None,
) -> None:
    """List threads, newest first."""
    common = Common(model, base_url, db, config, workspace)
    rows = common.store(common.settings()).recent(limit)
    if as_json:
        print(json.dumps([row.as_dict() for row in rows], indent=2, ensure_ascii=False))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(box=None, header_style="bold")
    for column in ("id", "title", "status", "msgs", "updated", "workspace"):
        table.add_column(column, overflow="ellipsis", no_wrap=column != "title")
    for row in rows:
        table.add_row(
            row.thread_id,
            row.title,
            row.status,
            str(row.messages),
            row.updated_at.replace("T", " ")[:16],
            row.workspace,
        )
    console = Console(highlight=False)
    if rows:
        console.print(table)
    else:
        console.print("no threads yet: start one with agentcli chat")
