"""The graph's state and the per-run context its nodes and tools read."""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from typing import Annotated, Any, TypedDict

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages

from agentcli.policy import Policy
from tools.context import ToolContext


def _union(old: list[str], new: list[str]) -> list[str]:
    return old + [name for name in new if name not in old]


class AgentState(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    allowed_tools: Annotated[list[str], _union]  # tools the person allowed with `A`
    invalid_turns: int  # consecutive model turns with an invalid call
    audit: Annotated[list[dict[str, Any]], operator.add]  # one record per decided call
    review: dict[str, Any] | None  # the policy's verdicts, while a person decides the rest


@dataclass
class RunContext(ToolContext):
    """Values for one run, never stored in the checkpoint: the policy comes from flags."""

    policy: Policy = field(default_factory=Policy)
    max_steps: int = 25
    max_invalid_turns: int = 3
    system_prompt: str | None = None
