"""`agentcli threads ...`: thread management (the index is read without loading checkpoints)."""

from __future__ import annotations

import json
import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from agentcli.cli.common import BaseUrlOpt, Common, ConfigOpt, DbOpt, ModelOpt, WorkspaceOpt

if TYPE_CHECKING:
    from agentcli.store import Store, ThreadRow

SHOW_RESULT_LINES = 8

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


ThreadArg = Annotated[str, typer.Argument(metavar="ID", help="Thread id or unique prefix.")]


class ExportFormat(StrEnum):
    md = "md"
    json = "json"


@app.command("show")
def show(
    thread_id: ThreadArg,
    as_json: Annotated[bool, typer.Option("--json", help="The transcript as JSON.")] = False,
    db: DbOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Show a thread: messages, and each tool call with its decision and result."""
    from agentcli.transcript import decision_text, entries

    store, row = _open(db, config, thread_id)
    turns = entries(store.values(row.thread_id))
    if as_json:
        print(json.dumps({"thread": row.as_dict(), "entries": turns}, indent=2, ensure_ascii=False))
        return
    from rich.console import Console
    from rich.text import Text

    console = Console(highlight=False)
    console.print(Text(f"thread {row.thread_id} · {row.title} · {row.status}", style="bold"))
    console.print(Text(f"{row.model} · {row.workspace} · {row.updated_at}", style="dim"))
    for turn in turns:
        if turn["text"]:
            who = "you" if turn["role"] == "user" else "assistant"
            console.print(Text.assemble((f"\n{who}: ", "bold cyan"), turn["text"]))
        for call in turn.get("calls", []):
            args = json.dumps(call["args"], ensure_ascii=False)
            console.print(Text(f"  → {call['tool']} {args}", style="cyan"))
            console.print(Text(f"    {decision_text(call['decision'])}", style="yellow"))
            for line in (call["result"] or "").splitlines()[:SHOW_RESULT_LINES]:
                console.print(Text(f"    │ {line}", style="dim"))


@app.command("export")
def export(
    thread_id: ThreadArg,
    fmt: Annotated[
        ExportFormat, typer.Option("--format", "-f", help="md or json.")
    ] = ExportFormat.md,
    db: DbOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Print a thread as Markdown to read, or JSON to load back."""
    from agentcli.transcript import to_json, to_markdown

    store, row = _open(db, config, thread_id)
    values = store.values(row.thread_id)
    sys.stdout.write(
        to_json(row, values) + "\n" if fmt is ExportFormat.json else to_markdown(row, values)
    )


def _open(db: Path | None, config: Path | None, thread_id: str) -> tuple[Store, ThreadRow]:
    common = Common(db=db, config=config)
    store = common.store(common.settings())
    return store, store.resolve(thread_id)
