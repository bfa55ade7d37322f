"""`agentcli acp`: agentcli as an editor's agent, over the Agent Client Protocol on stdio."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from agentcli.cli.common_options import (
    ApproveOpt,
    AutoApproveOpt,
    Common,
    DenyOpt,
    ModeOpt,
    SandboxOpt,
    common_options,
)
from agentcli.errors import UsageError

if TYPE_CHECKING:
    from agentcli.session.thread_session import ThreadSession


@common_options(requests=True)
def acp(
    auto_approve: AutoApproveOpt = False,
    approve: ApproveOpt = None,
    deny: DenyOpt = None,
    sandbox: SandboxOpt = None,
    mode: ModeOpt = None,
    *,
    common: Common,
) -> None:
    """Speak the Agent Client Protocol (ACP) on stdin and stdout, for an editor such as Zed
    to run agentcli as its agent and be the review screen.

    An editor session is a thread: a new session starts one in the editor's folder (or
    --workspace), and loading a session by its thread id replays the thread and continues
    it. Each call the approval mode does not allow is a permission request: allow once,
    allow always (the rule `A` offers at a terminal, for this thread), reject once, reject
    always (this session). A request the editor cancels or never answers leaves the call
    waiting, as `q` does; `agentcli review` sees it. Needs the acp extra:
    pip install 'agentcli[acp]'.
    """
    from importlib.util import find_spec

    if find_spec("acp") is None:  # an extra, and heavy: loaded only by agentcli/acp/
        raise UsageError(
            "agentcli acp needs the Agent Client Protocol SDK: pip install 'agentcli[acp]'"
        )
    from agentcli.cli.session_opening import check_early, open_session

    common.sandbox = sandbox
    common.take_mode(mode, False)
    settings = common.settings()  # its warnings go to stderr, never the protocol
    check_early(common, settings, approve, deny)
    workspace = common.checked_workspace()

    def opener(folder: Path | None) -> ThreadSession:
        """A session in `folder` (--workspace beats the editor's), or, for None, one that
        takes the workspace recorded with the thread it opens."""
        chosen = replace(common, workspace=workspace or folder)
        return open_session(chosen, auto_approve, approve, deny, quiet=True)

    from agentcli.acp.server import serve

    serve(opener, settings.approval_mode)
