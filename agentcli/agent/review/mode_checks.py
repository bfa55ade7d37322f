"""What an approval mode's grant must still meet in this run's context, which the policy
(agentcli/policy/approval_modes.py) decides without: the sandbox really confines the
command and no rule lifts it, and undo can take back every change of a write.

A grant that fails one of these is asked instead, with the reason; no mode ever runs a
call unconfined.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentcli.agent.toolset.sandboxing import unconfined_rule, would_confine
from agentcli.policy.approval_modes import LABEL, SHELL, WRITES
from agentcli.policy.approval_policy import Verdict
from agentcli.undo.around_calls import review_note


def held(ctx: Any, tool: str, args: Mapping[str, Any], verdict: Verdict) -> Verdict:
    """The verdict, or "ask" when a mode granted it and this run's context says otherwise."""
    if verdict.decision != "allow" or verdict.who != LABEL:
        return verdict
    why = _refusal(ctx, tool, args)
    return verdict if why is None else Verdict("ask", f"default ({verdict.by} does not: {why})")


def _refusal(ctx: Any, tool: str, args: Mapping[str, Any]) -> str | None:
    if tool == SHELL:
        sandbox = ctx.sandbox
        if (
            not would_confine(ctx, tool)
            or getattr(sandbox, "network", True) is not False
            or bool(getattr(sandbox, "hosts", None))
        ):
            return "the command would not run confined without network"
        if unconfined_rule(ctx.policy.rules, tool, args):
            return "a rule runs it unconfined"
    if tool in WRITES:
        call = {"name": tool, "args": dict(args)}
        if note := review_note(ctx, would_confine(ctx, tool), call):
            return f"it cannot be undone: {note}"
    return None
