"""The RunContext of a run, made from the settings in one place: for a session in this
process (session/local_graph.py) and for every run on LangGraph Server (server/graph.py).

What differs between the two is passed in: the workspace, the policy (the flags' on top of
the rules), the store that journals the calls, the approval key, the context window (a
local session asks the model server; a server does not), and whether answers come from
clients whose word on who decided is not believed.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentcli.agent.secrets import NEVER_PASS
from agentcli.agent.state import RunContext
from agentcli.agent.toolset.sandboxing import sandbox_of
from agentcli.config import Settings
from agentcli.hooks.hook_set import hook_set
from agentcli.policy.approval_policy import Policy
from agentcli.undo.call_snapshots import snapshots_of


def run_context(
    settings: Settings,
    *,
    workspace: Path,
    policy: Policy,
    redactor: Callable[[str], str],
    journal: Any,
    approval_key: Any,
    context_window: int | None,
    sandbox: Any = None,
    from_clients: bool = False,
) -> RunContext:
    """Everything the nodes and tools read during one run. `sandbox`: the session's, made
    once (None: made from the settings here)."""
    s = settings
    return RunContext(
        workspace=workspace,
        shell_timeout=s.shell_timeout,
        max_output_chars=s.max_output_chars,
        allow_private_urls=s.allow_private_urls,
        url_check=policy.redirect_refusal,
        env_passthrough=tuple(s.env_passthrough),
        env_never=NEVER_PASS,
        redactor=redactor,
        policy=policy,
        max_steps=s.max_steps,
        max_invalid_turns=s.max_invalid_turns,
        max_repeated_calls=s.max_repeated_calls,
        max_replans=s.max_replans,
        system_prompt=s.system_prompt,
        journal=journal,  # tool calls journalled: a re-run after a crash asks
        approval_key=approval_key,
        from_clients=from_clients,
        sandbox=sandbox if sandbox is not None else sandbox_of(s),
        snapshots=snapshots_of(s),
        context_window=context_window,
        compact=s.compact,
        compact_threshold=s.compact_threshold,
        compact_keep=s.compact_keep,
        tool_result_share=s.tool_result_share,
        answer_reserve=s.answer_reserve,
        hooks=hook_set(s, (s.api_key, s.db_url), getattr(redactor, "value", None)),
        tool_core=tuple(s.core),
        tool_descriptions=s.descriptions,
    )
