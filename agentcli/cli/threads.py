"""`agentcli threads ...`: thread management (the index is read without loading checkpoints)."""

from __future__ import annotations

import sys
from dataclasses import replace
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated

import typer
from agentcli_tools.plurals import counted

from agentcli.cli.common_options import Common, common_options
from agentcli.errors import ExitCode, UsageError
from agentcli.terminal_text import dumps, line
from agentcli.ui import make_console

if TYPE_CHECKING:
    from agentcli.threads.store import Store
    from agentcli.threads.thread_rows import ThreadRow

app = typer.Typer(help="List and manage threads.", no_args_is_help=True, rich_markup_mode=None)


@app.command("list")
@common_options(server=True)
def list_threads(
    as_json: Annotated[bool, typer.Option("--json", help="One JSON array of threads.")] = False,
    limit: Annotated[int | None, typer.Option("--limit", "-n", help="Newest N only.")] = None,
    status: Annotated[
        str | None, typer.Option("--status", help="idle, awaiting_approval or error.")
    ] = None,
    search: Annotated[
        str | None, typer.Option("--search", "-s", help="Text in the title or messages.")
    ] = None,
    *,
    common: Common,
) -> None:
    """List threads, newest first (--workspace: only that workspace's)."""
    server = common.server
    if server:
        from agentcli.threads.on_server import ServerThreads, connect

        index: Store | ServerThreads = ServerThreads(connect(server), server)
        where = str(common.workspace) if common.workspace else None  # as the runs named it
    else:
        from agentcli.threads.thread_rows import ThreadStatus

        index = common.store(common.settings())
        where = str(common.workspace.resolve()) if common.workspace else None
        if index.recent(1, status=ThreadStatus.RUNNING):  # maybe a run that died: read what it left
            from agentcli.session.stale_threads import settle_stale

            settle_stale(index)
    rows = index.recent(limit, status=status, search=search, workspace=where)
    from agentcli.agent.outbound import settings_redactor

    redact = settings_redactor(common.settings())  # titles of threads older than their redaction
    rows = [replace(r, title=redact(r.title), last_error=redact.value(r.last_error)) for r in rows]
    if as_json:
        print(dumps([row.as_dict() for row in rows], indent=2))
        return
    if not rows:
        print("no threads yet: start one with agentcli chat")
        return
    from agentcli.ui.columns import columns

    headers = ("id", "title", "status", "msgs", "updated", "workspace")
    cells = [
        (
            r.thread_id,
            r.title,
            r.status,
            str(r.messages),
            r.updated_at.replace("T", " ")[:16],
            r.workspace,
        )
        for r in rows
    ]
    print(columns(headers, cells, flex=1))


ThreadArg = Annotated[str, typer.Argument(metavar="ID", help="Thread id or unique prefix.")]


class ExportFormat(StrEnum):
    md = "md"
    json = "json"


@app.command("show")
@common_options()
def show(
    thread_id: ThreadArg,
    as_json: Annotated[bool, typer.Option("--json", help="The transcript as JSON.")] = False,
    *,
    common: Common,
) -> None:
    """Show a thread: messages, and each tool call with its decision and result."""
    from agentcli.agent.outbound import settings_redactor
    from agentcli.cli.thread_view import draw, mark_changes
    from agentcli.session import history
    from agentcli.threads.transcript import entries

    settings = common.settings()
    store = common.store(settings)
    row = store.resolve(thread_id)
    values = history.values(store, row.thread_id)
    turns = entries(values)
    mark_changes(settings, row, values.get("messages", []), turns)
    redact = settings_redactor(settings)  # as export does
    turns = redact.value(turns)
    # a thread made before titles were redacted; an error may quote what a request carried
    row = replace(row, title=redact(row.title), last_error=redact.value(row.last_error))
    if as_json:
        print(dumps({"thread": row.as_dict(), "entries": turns}, indent=2))
        return
    draw(make_console(), row, turns)


@app.command("export")
@common_options()
def export(
    thread_id: ThreadArg,
    fmt: Annotated[
        ExportFormat, typer.Option("--format", "-f", help="md or json.")
    ] = ExportFormat.md,
    *,
    common: Common,
) -> None:
    """Print a thread as Markdown to read, or JSON for scripts (messages, audit, decisions)."""
    from agentcli.agent.outbound import settings_redactor
    from agentcli.session import history
    from agentcli.threads.transcript import to_json
    from agentcli.ui.markdown_export import to_markdown

    store, row = _open(common, thread_id)
    values = history.values(store, row.thread_id)
    # JSON is exact data (controls escaped); Markdown shows them as marks; either way, what
    # a thread holds that the redactor knows (a key the person typed) does not leave
    text = to_json(row, values) + "\n" if fmt is ExportFormat.json else to_markdown(row, values)
    sys.stdout.write(settings_redactor(common.settings())(text))


def _open(common: Common, thread_id: str) -> tuple[Store, ThreadRow]:
    store = common.store(common.settings())
    return store, store.resolve(thread_id)


@app.command("delete")
@common_options()
def delete(
    thread_id: ThreadArg,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask.")] = False,
    force: Annotated[
        bool,
        typer.Option(
            "--force", help="Stop the agentcli process running it (on this machine) first."
        ),
    ] = False,
    *,
    common: Common,
) -> None:
    """Delete a thread: its checkpoints, pending calls and index entry. A thread another
    process is running is refused; --force stops that process first."""
    from agentcli.errors import ThreadBusy

    store, row = _open(common, thread_id)
    if not yes:
        if not sys.stdin.isatty():
            raise UsageError(f"deleting thread {row.thread_id} needs --yes when not at a terminal")
        if not typer.confirm(line(f"Delete thread {row.thread_id} ({row.title})?")):
            raise typer.Exit(ExitCode.ERROR)
    if force:
        store.stop_holder(row.thread_id)
    try:
        store.delete(row.thread_id)
    except ThreadBusy as busy:
        busy.args = (
            f"{busy}; or stop it and delete: agentcli threads delete {row.thread_id} --yes --force",
        )
        raise
    from pathlib import Path

    from agentcli.undo.call_snapshots import snapshots_of

    if (snapshots := snapshots_of(common.settings())) is not None:
        snapshots.forget(row.thread_id, Path(row.workspace))
    print(line(f"deleted thread {row.thread_id}"))


@app.command("rename")
@common_options()
def rename(
    thread_id: ThreadArg,
    title: Annotated[str, typer.Argument(help="The new title.")],
    *,
    common: Common,
) -> None:
    """Give a thread a new title."""
    store, row = _open(common, thread_id)
    if not title.strip():
        raise UsageError("the title is empty")
    store.rename(row.thread_id, title.strip())
    print(line(f"renamed thread {row.thread_id}: {title.strip()}"))


@app.command("fork")
@common_options()
def fork(
    thread_id: ThreadArg,
    at: Annotated[
        int | None,
        typer.Option("--at", metavar="N", help="Start before user message N (threads history)."),
    ] = None,
    restore_files: Annotated[
        bool,
        typer.Option(
            "--restore-files", help="Put the files agentcli changed since message N back too."
        ),
    ] = False,
    force: Annotated[
        bool,
        typer.Option("--force", help="With --restore-files: overwrite files changed since."),
    ] = False,
    *,
    common: Common,
) -> None:
    """Make a new thread from this one (its latest state, or before message N)."""

    if restore_files:
        from agentcli.session.undo import apply_undo, left_as_they_are, plan_undo
        from agentcli.undo.call_snapshots import snapshots_of

        if at is None:
            raise UsageError("--restore-files needs --at N (the message to go back before)")
        settings = common.settings()
        store = common.store(settings)
        row = store.resolve(thread_id)
        snapshots = snapshots_of(settings)
        with store.briefly(row.thread_id):
            plan = plan_undo(store, snapshots, row, at)
            new = apply_undo(store, snapshots, plan, force=force)
        restored = len(plan.restoration.paths) if plan.restoration else 0
        print(line(f"restored {counted(restored, 'file')}"), file=sys.stderr)
        for told in left_as_they_are(plan):
            print(line(told), file=sys.stderr)
    else:
        from agentcli.session.undo import fork_thread
        from agentcli.undo.call_snapshots import snapshots_of

        settings = common.settings()
        store = common.store(settings)
        row = store.resolve(thread_id)
        new = fork_thread(store, snapshots_of(settings), row, at)
    print(line(new.thread_id))
    print(line(f"forked from {row.thread_id}: agentcli resume {new.thread_id}"), file=sys.stderr)


@app.command("history")
@common_options()
def show_history(
    thread_id: ThreadArg,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON array of turns.")] = False,
    *,
    common: Common,
) -> None:
    """List a thread's user messages with the checkpoint before each (for fork --at N)."""
    from dataclasses import asdict

    from agentcli.session import history

    store, row = _open(common, thread_id)
    turns = history.turns(store, row.thread_id)
    if as_json:
        print(dumps([asdict(turn) for turn in turns], indent=2))
        return
    for turn in turns:
        text = " ".join(turn.text.split())
        clipped = text if len(text) <= 60 else text[:59] + "…"
        when = turn.at[:19].replace("T", " ")
        print(line(f"{turn.number:>4}  {when}  {turn.checkpoint_id or '-':<36}  {clipped}"))
