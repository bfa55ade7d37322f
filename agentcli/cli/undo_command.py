"""`agentcli undo` and `agentcli diff`: take back what the agent's calls changed, and see it."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated

import typer

from agentcli.cli.common_options import Common, common_options
from agentcli.cli.threads import ThreadArg
from agentcli.errors import ExitCode, UsageError
from agentcli.terminal_text import line

if TYPE_CHECKING:
    from agentcli.session.undo import UndoPlan


@common_options()
def undo(
    thread_id: ThreadArg,
    to: Annotated[
        int | None,
        typer.Option(
            "--to", metavar="N", help="Go back to before user message N (default: the last)."
        ),
    ] = None,
    files_only: Annotated[
        bool, typer.Option("--files-only", help="Restore the files; keep the conversation.")
    ] = False,
    conversation_only: Annotated[
        bool,
        typer.Option("--conversation-only", help="Rewind the conversation; leave the files."),
    ] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask.")] = False,
    force: Annotated[
        bool, typer.Option("--force", help="Overwrite files changed outside agentcli since.")
    ] = False,
    *,
    common: Common,
) -> None:
    """Put back the files the agent changed since before a message, and rewind the thread
    (on a fork; the thread it came from stays whole)."""
    from agentcli.session.undo import apply_undo, modes_done, plan_undo

    if files_only and conversation_only:
        raise UsageError("--files-only and --conversation-only exclude each other")
    settings = common.settings()
    store = common.store(settings)
    row = store.resolve(thread_id)
    with store.briefly(row.thread_id):
        plan = plan_undo(store, settings, row, to, files=not conversation_only)
        for text in describe(plan, files=not conversation_only, force=force):
            print(line(text), file=sys.stderr)
        if not yes:
            if not sys.stdin.isatty():
                raise UsageError(
                    f"undo on thread {row.thread_id} needs --yes when not at a terminal"
                )
            if not typer.confirm("Undo?"):
                raise typer.Exit(ExitCode.ERROR)
        now = apply_undo(
            store,
            plan,
            files=not conversation_only,
            conversation=not files_only,
            force=force,
        )
    print(line(now.thread_id))
    restored = plan.restoration.paths if plan.restoration and not conversation_only else []
    if restored:
        print(line(files_line("files restored", restored)), file=sys.stderr)
    if now.thread_id != row.thread_id:
        print(
            line(f"back before message {plan.turn}: agentcli resume {now.thread_id}"),
            file=sys.stderr,
        )
    else:
        print(line("files restored; the model is told with your next message"), file=sys.stderr)
    if plan.restoration is not None and not conversation_only:
        for text in modes_done(plan.restoration.done):
            print(line(text), file=sys.stderr)


def describe(plan: UndoPlan, files: bool, force: bool) -> list[str]:
    """What the undo will do, a line each; refuses (before asking) what --force would need."""
    from agentcli.session.undo import changed_since, left_as_they_are, restored_together

    out = [f"thread {plan.row.thread_id}: back to before message {plan.turn}"]
    restoration = plan.restoration
    if not files:
        return [*out, "files: left as they are"]
    if restoration is None or not (restoration.paths or restoration.mode_changes):
        out.append(
            "files: none to restore"
            if plan.unseen
            else "files: none changed by agentcli since then"
        )
    else:
        out.append(files_line("files to restore", restoration.paths))
    if restoration is not None and restoration.mode_changes:
        out.append(files_line("modes to restore", restoration.mode_changes))
    if restoration is not None and (restoration.paths or restoration.mode_changes):
        out += restored_together(plan, done=False)
    out += left_as_they_are(plan)
    if overwritten := changed_since(plan, force):
        out.append(f"to overwrite although changed outside agentcli: {', '.join(overwritten)}")
    return out


def files_line(what: str, paths: list[str]) -> str:
    """`what (N): a, b` with at most 20 named."""
    more = f" and {len(paths) - 20} more" if len(paths) > 20 else ""
    return f"{what} ({len(paths)}): {', '.join(paths[:20])}{more}"


@common_options()
def diff(
    thread_id: ThreadArg,
    turn: Annotated[
        int | None,
        typer.Option(
            "--turn", metavar="N", help="Only what the calls after user message N changed."
        ),
    ] = None,
    *,
    common: Common,
) -> None:
    """Print the unified diff of what the agent's calls changed (shell commands included).

    At a terminal it is coloured (not with NO_COLOR) and every character that would not
    show is a mark; piped, it is the patch as it is.
    """

    from agentcli.session import history
    from agentcli.session.agent_changes import turn_diff

    settings = common.settings()
    store = common.store(settings)
    row = store.resolve(thread_id)
    messages = history.values(store, row.thread_id).get("messages", [])
    diffs = turn_diff(settings, row, messages, turn)
    if not diffs:
        what = f"after message {turn}" if turn is not None else "in this thread"
        print(line(f"no file changed by agentcli's calls {what}"), file=sys.stderr)
        return
    if not sys.stdout.isatty():  # a pipe gets the patch as it is (git apply takes it)
        for number, text in diffs:
            sys.stdout.write(f"# message {number}\n{text}")
        return
    # a terminal sees every byte marked, but for the tabs and blanks that are the diff's
    # layout (ui/diff_text.py), coloured as the review colours a diff (none with NO_COLOR)
    from agentcli.ui import make_console
    from agentcli.ui.call_panel import highlighted

    console = make_console()
    for number, text in diffs:
        console.print(f"# message {number}", style="bold", markup=False)
        for shown in highlighted(text, "diff"):
            console.print(shown, soft_wrap=True)  # long lines whole: the terminal wraps them
