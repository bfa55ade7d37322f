"""Approved calls of one turn run as tasks, each in a thread of its own (readers side by
side, the rest in turn: agent/executor.py), and each writes the call journal through the
store's one connection: none may fail for it."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool

from agentcli.config import Settings
from agentcli.events import Done
from agentcli.policy.approval_policy import Policy
from agentcli.session.local import Session
from agentcli.threads.backends import open_store
from tests.helpers.fakes import FakeChatModel

CALLS = 4


@tool
def nap(n: int) -> str:
    """Sleep a moment.

    Args:
        n: which nap
    """
    time.sleep(0.01)
    return f"slept {n}"


class Napper(FakeChatModel):
    """Asks for four naps after each user message, answers after their results."""

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):  # type: ignore[no-untyped-def]
        from langchain_core.outputs import ChatGeneration, ChatResult

        if isinstance(messages[-1], ToolMessage):
            reply = AIMessage("rested")
        else:
            turn = sum(m.type == "human" for m in messages)
            calls = [
                {"name": "nap", "args": {"n": i}, "id": f"nap_{turn}_{i}", "type": "tool_call"}
                for i in range(CALLS)
            ]
            reply = AIMessage("", tool_calls=calls)
        return ChatResult(generations=[ChatGeneration(message=reply)])


@pytest.mark.backends
def test_parallel_calls_turn_after_turn(tmp_path: Path, database: str) -> None:
    settings = Settings(db=database)
    session = Session(
        settings,
        open_store(settings),
        Policy.build(auto_approve=True),
        workspace=tmp_path,
        model=Napper(replies=[], calls=[]),
        tools=[nap],
    )
    for turn in range(15):
        events = list(session.send(f"rest {turn}"))
        done = events[-1]
        assert isinstance(done, Done) and done.final == "rested", events
    messages = session.state().values["messages"]
    assert sum(isinstance(m, ToolMessage) for m in messages) == 15 * CALLS
