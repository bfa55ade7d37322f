"""A call whose arguments agentcli cannot keep is an invalid call, not a failed run: the
model is told why and nothing runs (model/storable_calls.py)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, ToolMessage

from agentcli.agent.model.storable_calls import UNKEPT, with_storable_args
from agentcli.events import Done
from agentcli.policy.approval_policy import Policy
from tests.helpers.fakes import say
from tests.unit.agent.test_executor import ORDER, session

UNKEEPABLE: list[Any] = [
    {"label": 2**64},
    {"label": -(2**63) - 1},
    {"label": ["ok", {"deep": 10**30}]},
    {"label": "x\ud800y"},
    {"key \udfff": "v"},
]


@pytest.mark.parametrize("args", UNKEEPABLE, ids=range(len(UNKEEPABLE)))
def test_such_a_call_goes_back_to_the_model_and_nothing_runs(args: dict[str, Any]) -> None:
    ORDER.clear()
    turn = AIMessage("", tool_calls=[{"name": "fast", "args": args, "id": "a"}])
    with tempfile.TemporaryDirectory() as folder:
        s = session(Path(folder), Policy.build(auto_approve=True), turn, say("ok"))
        events = list(s.send("go"))
        assert isinstance(events[-1], Done) and events[-1].final == "ok"
        [told] = [m for m in s.state().values["messages"] if isinstance(m, ToolMessage)]
    assert ORDER == [] and UNKEPT in told.text and told.tool_call_id == "a"


def test_the_largest_and_smallest_64_bit_integers_are_kept() -> None:
    for n in (2**64 - 1, -(2**63), 1.5e308):
        reply = AIMessage("", tool_calls=[{"name": "fast", "args": {"label": n}, "id": "a"}])
        assert with_storable_args(reply) is reply
