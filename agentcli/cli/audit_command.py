"""`agentcli audit ...`: every decision across threads, its hash chain verified, and rules
suggested for what a person keeps approving by hand."""

from __future__ import annotations

import sys
from typing import Annotated, Any

import typer
from agentcli_tools.plurals import counted

from agentcli.cli.common_options import Common, common_options
from agentcli.errors import ExitCode
from agentcli.terminal_text import dumps, line

app = typer.Typer(
    help="Every decision across threads; `verify` its chain; `suggest` rules.",
    invoke_without_command=True,
    rich_markup_mode=None,
)

ThreadOpt = Annotated[
    str | None, typer.Option("--thread", "-t", help="Only this thread (id or unique prefix).")
]


@app.callback()
@common_options()
def audit(
    ctx: typer.Context,
    thread: ThreadOpt = None,
    since: Annotated[
        str | None,
        typer.Option("--since", help="Only decisions since: an ISO date/time, or 30m, 2h, 7d."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON array of records.")] = False,
    *,
    common: Common,
) -> None:
    """List every decision (all threads, or one), oldest first: who, which rule or flag,
    edited arguments as a diff, the sandbox and the result."""
    if ctx.invoked_subcommand is not None:
        return
    from agentcli.session.audit_reading import decisions

    settings = common.settings()
    found = decisions(settings, common.store(settings), thread, since)
    if as_json:
        print(dumps([entry.as_dict() for entry in found], indent=2))
        return
    if not found:
        print("no decisions recorded" + (" in that time" if since else ""))
        return
    for entry in found:
        result = entry.status or "-"
        head = (
            f"{entry.at.replace('T', ' ')[:19]}  {entry.thread}  {entry.tool}  {entry.decision}"
            f"  by {entry.who} ({entry.by})  result: {result}"
        )
        print(line(head))
        print(line(f"    args: {_short(entry.args)}"))
        if entry.sandbox:
            print(line(f"    sandbox: {entry.sandbox}"))
        if entry.feedback:
            print(line(f"    feedback: {entry.feedback}"))
        for diff_line in (entry.diff or "").splitlines():
            print(line(f"    {diff_line}"))


def _short(args: Any, limit: int = 160) -> str:
    text = dumps(args)
    return text if len(text) <= limit else text[: limit - 1] + "…"


@app.command()
@common_options()
def verify(thread: ThreadOpt = None, *, common: Common) -> None:
    """Recompute every thread's audit chain: exit 1 with each changed, inserted or deleted
    record, else 0 with a one-line summary. Records older than the chain are not faults."""
    from agentcli.session.audit_reading import verified

    verdict = verified(common.store(common.settings()), thread)
    for where, note in verdict.notes:
        print(line(f"thread {where}: {note}"))
    for where, fault in verdict.faults:
        print(line(f"thread {where} record {fault.position}: {fault.what}"))
    summary = (
        f"{counted(verdict.threads, 'thread')}, {counted(verdict.chained, 'chained record')},"
        f" {verdict.unchained} unchained (older than the audit chain)"
    )
    if verdict.faults:
        print(
            line(f"audit verify: {counted(len(verdict.faults), 'fault')} in {summary}"),
            file=sys.stderr,
        )
        raise typer.Exit(ExitCode.ERROR)
    print(line(f"audit verified: {summary}"))


@app.command()
@common_options()
def suggest(
    min_count: Annotated[
        int, typer.Option("--min", min=1, help="Approved by hand at least this often.")
    ] = 3,
    thread: ThreadOpt = None,
    *,
    common: Common,
) -> None:
    """Propose [[approval.rules]] (TOML, ready to paste) for calls a person keeps approving
    by hand and never rejected or edited; never a rule that allows everything."""
    from agentcli.session.audit_reading import suggested

    found = suggested(common.store(common.settings()), thread, min_count)
    if not found:
        print(f"nothing to suggest: no call approved by hand {counted(min_count, 'time')} or more")
        return
    for item in found:
        print(line(f"# approved by hand {counted(item.count, 'time')}, never rejected or edited;"))
        print(line(f"# e.g. {dumps(item.example)}"))
        print("\n".join(line(text) for text in item.toml().splitlines()))
        print()
