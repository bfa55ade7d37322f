"""The review state itself: a malformed answer never wedges a thread, and a call that leaves
its review without a decision is recorded and told to the model as not run.

Driven on the graph as LangGraph Server runs it (no context, an in-memory checkpointer),
with answers any client could send.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from langchain_core.messages import HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END
from langgraph.types import Command

from agentcli.config import Settings
from agentcli.dismissed import NOT_RUN
from agentcli.graph import build_graph
from agentcli.server import context_schema
from tests.fakes import FakeChatModel, call, say
from tests.unit.conftest import RAN, note

EDIT = {"type": "edit", "edited_action": {"name": "note", "args": {"text": "bye"}}}
# answers of the wrong shape, from older or foreign clients, or hostile ones
PAYLOADS: list[Any] = [
    [{"type": "accept", "args": None}],  # an older Agent Inbox
    [{"type": "approve"}],  # a bare list
    "approve",
    "",
    "{",
    '{"decisions": "approve"}',
    0,
    1.5,
    True,
    [],
    {},  # an empty resume map: LangGraph passes nothing on, the same question stays
    {"decisions": []},
    {"decisions": None},
    {"decisions": [{"type": "approve"}, {"type": "approve"}]},  # wrong count
    {"decisions": [None]},
    {"decisions": ["approve"]},
    {"decisions": [{}]},
    {"decisions": [{"type": "accept"}]},
    {"decisions": [{"type": "APPROVE"}]},
    {"decisions": [{"type": ["approve"]}]},
    {"decisions": [{"type": "done"}]},  # only for a call cut off by a crash
    {"decisions": [{"type": "edit"}]},  # no args
    {"decisions": [{"type": "edit", "edited_action": "x"}]},
    {"decisions": [{"type": "edit", "edited_action": {"args": None}}]},
    {"decisions": [{"type": "edit", "edited_action": {"args": ["bye"]}}]},
    {"decisions": [{"type": "edit", "edited_action": {"args": {}}}]},  # schema: text missing
    {"decisions": [{"type": "edit", "edited_action": {"args": {"text": 5, "times": "x"}}}]},
    {"decisions": [{"type": "reject", "message": {"text": "no"}}]},
    {"decisions": [{"type": "approve", "who": ["policy"]}]},
    {"answer": [{"type": "approve"}]},
]


@pytest.fixture(autouse=True)
def _clear() -> None:
    RAN.clear()


def graph_at_review(tmp_path: Path, *replies: Any) -> tuple[Any, dict[str, Any], FakeChatModel]:
    model = FakeChatModel(replies=[call(("note", {"text": "hi"})), *replies], calls=[])
    schema = context_schema(Settings(), tmp_path)
    graph = build_graph(lambda: model, [note], schema).compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    graph.invoke({"messages": [("user", "note hi")]}, config, context={})
    return graph, config, model


def pending(graph: Any, config: dict[str, Any]) -> dict[str, Any]:
    [waiting] = graph.get_state(config).interrupts
    return waiting.value


@pytest.mark.parametrize("bad", PAYLOADS, ids=range(len(PAYLOADS)))
def test_a_malformed_answer_is_refused_and_the_review_stays_answerable(
    tmp_path: Path, bad: Any
) -> None:
    graph, config, model = graph_at_review(tmp_path, say("noted"))
    graph.invoke(Command(resume=bad), config, context={})
    again = pending(graph, config)
    assert again["error"].startswith("answer refused") if bad != {} else "error" not in again
    assert [r["name"] for r in again["action_requests"]] == ["note"] and RAN == []
    graph.invoke(Command(resume={"decisions": [EDIT]}), config, context={})  # a good one
    messages = graph.get_state(config).values["messages"]
    assert RAN == [{"text": "bye", "times": 1}]
    assert messages[-2].content == "noted 'bye' x1" and messages[-1].content == "noted"
    assert graph.get_state(config).interrupts == ()


def test_many_bad_answers_in_a_row_then_a_good_one(tmp_path: Path) -> None:
    graph, config, _ = graph_at_review(tmp_path, say("noted"))
    for bad in PAYLOADS:
        graph.invoke(Command(resume=bad), config, context={})
        assert pending(graph, config)["action_requests"] and RAN == []
    graph.invoke(Command(resume={"decisions": [{"type": "approve"}]}), config, context={})
    assert RAN == [{"text": "hi", "times": 1}]


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    answer=st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=8),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner),
        max_leaves=8,
    )
)
def test_any_answer_runs_what_it_says_or_is_refused(tmp_path: Path, answer: Any) -> None:
    assume(answer is not None and answer != {})  # no resume at all: LangGraph's own refusal
    RAN.clear()
    graph, config, _ = graph_at_review(tmp_path, say("noted"))
    try:
        graph.invoke(Command(resume=answer), config, context={})
    except TypeError:  # a value the checkpointer cannot store (an int over 64 bits): not kept
        graph.invoke(Command(resume={"decisions": [{"type": "reject"}]}), config, context={})
        assert graph.get_state(config).values["audit"][-1]["decision"] == "rejected"
        return
    state = graph.get_state(config)
    if state.interrupts:  # refused: still pending, nothing ran
        assert "error" in state.interrupts[0].value and RAN == []
    else:  # a real decision (hypothesis rarely builds one)
        assert state.values["audit"][-1]["decision"] in ("approved", "rejected")


PAYLOADS_SKIP = ["goto_end_then_message", "foreign_tool_message", "message_while_pending"]


def skip_review(graph: Any, config: dict[str, Any], how: str) -> None:
    """What Agent Chat UI does to leave a review without answering it."""
    ai = graph.get_state(config).values["messages"][-1]
    if how == "goto_end_then_message":  # "Mark as resolved", then a new message
        graph.invoke(Command(goto=END), config, context={})
        graph.invoke({"messages": [HumanMessage("next")]}, config, context={})
    elif how == "foreign_tool_message":  # a message typed at the review
        done = ToolMessage(
            "Successfully handled tool call.", tool_call_id=ai.tool_calls[0]["id"], name="note"
        )
        graph.invoke({"messages": [done, HumanMessage("next")]}, config, context={})
    else:
        graph.invoke({"messages": [HumanMessage("next")]}, config, context={})


@pytest.mark.parametrize("how", PAYLOADS_SKIP)
def test_a_skipped_review_is_audited_and_the_model_told_it_did_not_run(
    tmp_path: Path, how: str
) -> None:
    graph, config, model = graph_at_review(tmp_path, say("ok, it did not run"))
    call_id = graph.get_state(config).values["messages"][-1].tool_calls[0]["id"]
    skip_review(graph, config, how)
    values = graph.get_state(config).values
    assert RAN == []
    dismissed = [r for r in values["audit"] if r["decision"] == "dismissed"]
    assert [r["call_id"] for r in dismissed] == [call_id]
    sent = model.calls[-1]  # what the model read: the call did not run, then the message
    results = [m for m in sent if isinstance(m, ToolMessage)]
    assert [(m.tool_call_id, m.content) for m in results] == [(call_id, NOT_RUN)]
    kinds = [type(m).__name__ for m in sent]
    assert kinds == ["SystemMessage", "HumanMessage", "AIMessage", "ToolMessage", "HumanMessage"]
    assert values["review"] is None and values["messages"][-1].content == "ok, it did not run"


def test_an_answered_review_adds_no_dismissed_record(tmp_path: Path) -> None:
    graph, config, _ = graph_at_review(tmp_path, say("noted"), say("again"))
    graph.invoke(Command(resume={"decisions": [{"type": "approve"}]}), config, context={})
    graph.invoke({"messages": [HumanMessage("next")]}, config, context={})
    audit = graph.get_state(config).values["audit"]
    assert [r["decision"] for r in audit] == ["approved"]
