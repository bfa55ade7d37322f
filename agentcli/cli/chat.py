"""`agentcli chat` and `agentcli resume`: the interactive session."""

from __future__ import annotations

from typing import Annotated

import typer

from agentcli.cli.common import (
    ApproveOpt,
    AutoApproveOpt,
    Common,
    DenyOpt,
    LastOpt,
    ThreadOpt,
    common_options,
)

MessageArg = Annotated[str | None, typer.Argument(help="First message (else you are asked).")]


@common_options(server=True)
def chat(
    message: MessageArg = None,
    thread: ThreadOpt = None,
    last: LastOpt = False,
    auto_approve: AutoApproveOpt = False,
    approve: ApproveOpt = None,
    deny: DenyOpt = None,
    *,
    common: Common,
) -> None:
    """Talk with the agent; every tool call waits for your decision."""
    from agentcli.cli.chatloop import Chat
    from agentcli.cli.starting import start

    Chat(start(common, thread, last, auto_approve, approve, deny)).loop(message)


@common_options(server=True)
def resume(
    thread_id: Annotated[
        str | None,
        typer.Argument(metavar="[ID]", help="Thread id or prefix (default: the latest here)."),
    ] = None,
    message: MessageArg = None,
    auto_approve: AutoApproveOpt = False,
    approve: ApproveOpt = None,
    deny: DenyOpt = None,
    *,
    common: Common,
) -> None:
    """Continue a thread; a pending review is shown first."""
    from agentcli.cli.chatloop import Chat
    from agentcli.cli.starting import start

    Chat(start(common, thread_id, thread_id is None, auto_approve, approve, deny)).loop(message)
