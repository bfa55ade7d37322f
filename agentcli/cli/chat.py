"""`agentcli chat` and `agentcli resume`: the interactive session."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from agentcli.cli.common_options import (
    ApproveOpt,
    AutoApproveOpt,
    Common,
    DenyOpt,
    LastOpt,
    ModeOpt,
    PlanOpt,
    SandboxOpt,
    ThreadOpt,
    common_options,
)

if TYPE_CHECKING:
    from agentcli.cli.early_prompt import Starting

MessageArg = Annotated[str | None, typer.Argument(help="First message (else you are asked).")]


@common_options(server=True, requests=True)
def chat(
    message: MessageArg = None,
    thread: ThreadOpt = None,
    last: LastOpt = False,
    auto_approve: AutoApproveOpt = False,
    approve: ApproveOpt = None,
    deny: DenyOpt = None,
    sandbox: SandboxOpt = None,
    mode: ModeOpt = None,
    plan: PlanOpt = False,
    *,
    common: Common,
) -> None:
    """Talk with the agent; every tool call the approval mode does not allow waits for
    your decision (/mode shows and changes the mode).

    In a message, @path attaches that workspace file's content. At the prompt, !command
    runs a shell command as you (no model, no review); its output goes with your next
    message; /plan MESSAGE asks for a plan for one message. An AGENTS.md at the workspace
    root is added to the system prompt.
    """
    from agentcli.cli.early_prompt import start

    common.sandbox = sandbox
    common.take_mode(mode, plan)
    starting = start(common, thread, last, auto_approve, approve, deny)
    talk(starting, message)


@common_options(server=True, requests=True)
def resume(
    thread_id: Annotated[
        str | None,
        typer.Argument(metavar="[ID]", help="Thread id or prefix (default: the latest here)."),
    ] = None,
    message: MessageArg = None,
    auto_approve: AutoApproveOpt = False,
    approve: ApproveOpt = None,
    deny: DenyOpt = None,
    sandbox: SandboxOpt = None,
    mode: ModeOpt = None,
    plan: PlanOpt = False,
    *,
    common: Common,
) -> None:
    """Continue a thread, showing its last exchanges first.

    Calls waiting for review are shown next, before the prompt; a thread whose workspace
    folder is gone is warned about (--workspace DIR moves it).
    """
    from agentcli.cli.early_prompt import start

    common.sandbox = sandbox
    common.take_mode(mode, plan)
    starting = start(common, thread_id, thread_id is None, auto_approve, approve, deny)
    talk(starting, message)


def talk(starting: Starting, message: str | None) -> None:
    """The chat, until the person leaves; then the session being made is let finish."""
    from agentcli.cli.chat_loop import Chat  # after the checks: an error does not wait for it

    try:
        Chat(starting).loop(message)
    finally:
        starting.settle()
