"""`agentcli run`: scripted runs, decided by policy and flags, never a tty."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated

import typer

from agentcli.cli.common_options import (
    ApproveOpt,
    AutoApproveOpt,
    Common,
    DenyOpt,
    LastOpt,
    ModeOpt,
    OutputFormat,
    PlanOpt,
    SandboxOpt,
    ThreadOpt,
    common_options,
    warn,
)
from agentcli.cli.session_opening import attach, check_early, checked_with_thread, open_session
from agentcli.errors import UsageError

if TYPE_CHECKING:
    from agentcli.session.thread_session import ThreadSession

OutputOpt = Annotated[
    OutputFormat, typer.Option("--output", "-o", help="text, json (one object) or jsonl (events).")
]


@common_options(server=True, requests=True)
def run(
    message: Annotated[
        str | None, typer.Argument(help="The message; '-' reads it from stdin.", show_default=False)
    ] = None,
    thread: ThreadOpt = None,
    last: LastOpt = False,
    output: OutputOpt = OutputFormat.text,
    auto_approve: AutoApproveOpt = False,
    approve: ApproveOpt = None,
    deny: DenyOpt = None,
    sandbox: SandboxOpt = None,
    mode: ModeOpt = None,
    plan: PlanOpt = False,
    *,
    common: Common,
) -> None:
    """Run without a terminal: calls no policy allows park the thread (exit 3).

    The approval mode (--mode) runs what it need not ask about; --approve TOOL and
    --auto-approve allow more; what is still asked parks the thread.

    With --thread and no message: decide pending calls by policy, or retry a failed call.
    A message for a thread whose calls wait for a person is refused (exit 2): decide them
    first with `agentcli review`. A failed run names the thread it leaves behind;
    --output jsonl starts with a `start` event that carries the thread id.
    """
    if message == "-":
        message = sys.stdin.read()
        if not message.strip():
            raise UsageError("no message on stdin (the input was empty)")
    elif message is not None and not message.strip():
        raise UsageError("the message is empty: give some text, or '-' to read it from stdin")
    if message is None and thread is None and not last:
        raise UsageError("give a message, '-' to read it from stdin, or --thread ID to continue")
    common.take_mode(mode, plan)
    if common.mode == "plan" and message is None:
        raise UsageError("--plan goes with a message: the model plans what the message asks")
    common.sandbox = sandbox
    settings = common.settings()
    plan = message is not None and settings.approval_mode == "plan"
    with_thread = checked_with_thread(common, settings, bool(thread or last))
    if not with_thread:
        check_early(common, settings, approve, deny)
    if common.server:
        session = open_session(common, auto_approve, approve, deny)
        attach(session, thread, last)
        _play(session, output, message, plan)
        return
    from agentcli.cli.thread_claim import claim

    taken = claim(common, settings, thread, last)  # listed, or held, at once
    try:
        if taken.row is not None and with_thread:  # checked on the thread's server
            from agentcli.session.thread_origin import for_thread

            check_early(common, for_thread(settings, taken.row), approve, deny)
        session = open_session(common, auto_approve, approve, deny, store=taken.store)
        if taken.new:
            session.thread_id = taken.thread_id
        else:
            attach(session, taken.thread_id, False)
        _play(session, output, message, plan)
    except BaseException:
        taken.unclaim()  # a new thread that never got its message is not left behind
        raise


def _play(session: ThreadSession, output: OutputFormat, message: str | None, plan: bool) -> None:
    from agentcli.cli.early_prompt import fixed_part_line
    from agentcli.cli.run_output import Scripted

    if message is not None and (line := fixed_part_line(session)) and line[1] == "warning":
        warn(line[0])  # tools left out to fit the window

    Scripted(session, output).run(message, plan=plan)
