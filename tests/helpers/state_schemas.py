"""The agent's state with DeltaChannels that keep a full copy every n updates, so that a short
thread in a test replays its writes across copies, as a long one does."""

from __future__ import annotations

from typing import Annotated, Any, TypedDict, get_type_hints

import pytest
from langchain_core.messages import AnyMessage
from langgraph.channels import DeltaChannel

import agentcli.agent.agent_graph
import agentcli.agent.review.node
from agentcli.agent.state import AgentState, _extend
from agentcli.threads.langgraph_internals import messages_delta_reducer


def snapshot_every(n: int) -> type:
    """AgentState whose DeltaChannels snapshot every n updates, to replay across copies."""
    fields = get_type_hints(AgentState, include_extras=True)
    fields["messages"] = Annotated[
        list[AnyMessage], DeltaChannel(messages_delta_reducer, snapshot_frequency=n)
    ]
    fields["audit"] = Annotated[list[dict[str, Any]], DeltaChannel(_extend, snapshot_frequency=n)]
    return TypedDict("SnapshotState", fields, total=False)  # type: ignore[operator, no-any-return]


def use_snapshot_every(monkeypatch: pytest.MonkeyPatch, n: int) -> None:
    """Graphs built from now on (in this test) keep a full copy every n updates."""
    schema = snapshot_every(n)
    monkeypatch.setattr(agentcli.agent.agent_graph, "AgentState", schema)
    monkeypatch.setattr(agentcli.agent.review.node, "AgentState", schema)
