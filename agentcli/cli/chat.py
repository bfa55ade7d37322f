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
    attach,
    common_options,
    open_session,
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
    session = open_session(
        common, auto_approve, approve, deny
    )
    attach(session, thread, last)
    from agentcli.cli.chatloop import Chat

    Chat(session).loop(message)


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
    session = open_session(
        common, auto_approve, approve, deny
    )
    attach(session, thread_id, thread_id is None)
    from agentcli.cli.chatloop import Chat

    Chat(session).loop(message)
