"""`agentcli chat` and `agentcli resume`: the interactive session."""

from __future__ import annotations

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
    LastOpt,
    ModelOpt,
    ServerOpt,
    ThreadOpt,
    WorkspaceOpt,
    attach,
    open_session,
)

MessageArg = Annotated[str | None, typer.Argument(help="First message (else you are asked).")]


def chat(
    message: MessageArg = None,
    thread: ThreadOpt = None,
    last: LastOpt = False,
    auto_approve: AutoApproveOpt = False,
    approve: ApproveOpt = None,
    deny: DenyOpt = None,
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
    db: DbOpt = None,
    config: ConfigOpt = None,
    workspace: WorkspaceOpt = None,
    server: ServerOpt = None,
) -> None:
    """Talk with the agent; every tool call waits for your decision."""
    session = open_session(
        Common(model, base_url, db, config, workspace, server), auto_approve, approve, deny
    )
    attach(session, thread, last)
    from agentcli.cli.chatloop import Chat

    Chat(session).loop(message)


def resume(
    thread_id: Annotated[
        str | None,
        typer.Argument(metavar="[ID]", help="Thread id or prefix (default: the latest here)."),
    ] = None,
    message: MessageArg = None,
    auto_approve: AutoApproveOpt = False,
    approve: ApproveOpt = None,
    deny: DenyOpt = None,
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
    db: DbOpt = None,
    config: ConfigOpt = None,
    workspace: WorkspaceOpt = None,
    server: ServerOpt = None,
) -> None:
    """Continue a thread; a pending review is shown first."""
    session = open_session(
        Common(model, base_url, db, config, workspace, server), auto_approve, approve, deny
    )
    attach(session, thread_id, thread_id is None)
    from agentcli.cli.chatloop import Chat

    Chat(session).loop(message)
