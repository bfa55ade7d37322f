"""The fixed part of a session's requests, as `doctor`, `run` and the chat's start report
it: the system prompt and the tools one request in a workspace offers, against a window
(context/fixed_part.py chooses; offered_tools.py binds)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from langchain_core.tools import BaseTool

from agentcli.agent.agent_graph import system_prompt
from agentcli.agent.context.fit import ContextFit
from agentcli.agent.context.fixed_part import Offer
from agentcli.agent.offered_tools import Offering
from agentcli.agent.state import RunContext
from agentcli.config import Settings


def offer_for(
    settings: Settings, tools: Sequence[BaseTool], workspace: Path, window: int | None
) -> Offer:
    """What a session with these settings offers the model in a workspace's first request,
    and its fixed cost."""
    ctx = RunContext(
        workspace=workspace,
        system_prompt=settings.system_prompt,
        context_window=window,
        compact_threshold=settings.compact_threshold,
        answer_reserve=settings.answer_reserve,
        compact_keep=settings.compact_keep,
        tool_result_share=settings.tool_result_share,
        tool_core=tuple(settings.core),
        tool_descriptions=settings.descriptions,
    )
    offering = Offering(lambda: None, tools, settings.tool_calls)
    budget = ContextFit(tools).budget(ctx)
    return offering.choose(system_prompt(ctx), ctx, budget, strict=False)
