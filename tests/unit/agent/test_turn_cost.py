"""A long-lived Session never reloads its thread between turns (issue 8): what a run
leaves (a pending review, the stop reason, the index row) is read from its stream."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langgraph.pregel import Pregel

from agentcli.errors import RunStopped
from agentcli.events import ReviewRequest
from agentcli.policy.approval_policy import Policy
from agentcli.session.local import Session
from tests.helpers.fakes import call, say
from tests.unit.conftest import RAN


@pytest.fixture
def reloads(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every full state reconstruction: a get_state() of any compiled graph."""
    seen: list[Any] = []
    original = Pregel.get_state

    def counted(self: Pregel, config: Any, **kwargs: Any) -> Any:
        seen.append(config["configurable"]["thread_id"])
        return original(self, config, **kwargs)

    monkeypatch.setattr(Pregel, "get_state", counted)
    return seen


def check_index(s: Session, reloads: list[Any], status: str, error: str = "") -> None:
    """The index row and what the session knows both agree with the saved state (the
    reads made here are not counted)."""
    known = s._known()  # a read here is the session's: it did not know
    counted = len(reloads)
    saved = s.graph.get_state(s.config)
    del reloads[counted:]
    row = s.store.resolve(s.thread_id)
    assert (row.status, row.messages) == (status, len(saved.values["messages"]))
    assert error in (row.last_error or "") if error else row.last_error is None
    for key in ("messages", "allowed_tools", "invalid_turns"):
        assert known.values.get(key) == saved.values.get(key), key
    assert [(i.id, i.value) for i in known.interrupts] == [
        (i.id, i.value) for i in saved.interrupts
    ]


def test_chat_turns_on_a_thread_never_reload_it(make, reloads: list[Any]) -> None:
    s = make([say("one"), say("two"), say("three")])
    for text in ("a", "b", "c"):
        assert list(s.send(text))[-1].status == "done"
    assert reloads == []
    check_index(s, reloads, "idle")


@pytest.mark.backends
def test_tool_turns_and_reviews_never_reload_the_thread(make, reloads: list[Any]) -> None:
    s = make(
        [call(("note", {"text": "1"})), say("noted"), call(("note", {"text": "2"})), say("ok")]
    )
    for text in ("first", "second"):
        events = list(s.send(text))
        review = events[-2]
        assert isinstance(review, ReviewRequest) and events[-1].status == "awaiting_approval"
        assert s.pending() == review
        assert s.policy_decisions(review) is None  # the chat asks the person, then decides
        assert list(s.decide([{"type": "approve"}]))[-1].status == "done"
    assert reloads == []
    assert RAN == [{"text": "1", "times": 1}, {"text": "2", "times": 1}]
    check_index(s, reloads, "idle")


def test_a_pending_review_is_known_without_a_reload(make, reloads: list[Any]) -> None:
    s = make([call(("note", {"text": "x"}), ("peek", {"path": "p"}))], Policy.build())
    list(s.send("go"))
    check_index(s, reloads, "awaiting_approval")
    with pytest.raises(Exception, match="awaiting review"):
        s.send("something else")
    assert reloads == []


@pytest.mark.backends
def test_an_opened_thread_is_read_once(make, reloads: list[Any]) -> None:
    first = make([call(("note", {"text": "later"}))])
    list(first.send("go"))
    first.store.close()
    second = make([say("done"), say("again")])
    second.open(first.thread_id)
    assert second.pending() is not None
    assert second.policy_decisions(second.pending()) is None
    list(second.decide([{"type": "approve"}]))
    list(second.send("more"))
    assert len(reloads) == 1
    check_index(second, reloads, "idle")


def test_always_is_known_to_the_policy_without_a_reload(make, reloads: list[Any]) -> None:
    s = make([call(("peek", {"path": "1"})), say("ok")])
    list(s.send("go"))
    list(s.decide([{"type": "approve", "always": True}]))
    review = ReviewRequest(s.thread_id, [{"id": "x", "name": "peek", "args": {"path": "2"}}])
    [decision] = s.policy_decisions(review) or [{}]
    assert (decision["type"], decision["by"]) == ("approve", "always for this thread")
    assert reloads == []
    check_index(s, reloads, "idle")


def test_allowing_a_tool_reads_the_new_state(make, reloads: list[Any]) -> None:
    s = make([say("hi"), call(("note", {"text": "n"})), say("done")])
    list(s.send("hello"))
    s.allow_tool("note")  # a new checkpoint, written outside a run
    assert list(s.send("note it"))[-1].status == "done"
    assert RAN == [{"text": "n", "times": 1}]
    assert len(reloads) == 1
    check_index(s, reloads, "idle")


def test_the_step_limit_keeps_the_index_true(make, reloads: list[Any]) -> None:
    loop = [call(("peek", {"path": str(i)})) for i in range(3)]
    s = make([say("hi"), *loop, say("back")], Policy.build(auto_approve=True), max_steps=3)
    list(s.send("hello"))
    with pytest.raises(RunStopped, match="max_steps"):
        list(s.send("loop"))
    check_index(s, reloads, "error", "stopped after 3 model steps")
    assert list(s.send("stop"))[-1].final == "back"
    assert reloads == []
    check_index(s, reloads, "idle")


def test_the_invalid_turn_limit_keeps_the_index_true(make, reloads: list[Any]) -> None:
    bad = [call(("note", {"wrong": i})) for i in range(2)]
    s = make([say("hi"), *bad, say("fixed")], max_invalid_turns=2)
    list(s.send("hello"))
    with pytest.raises(RunStopped, match="invalid tool calls 2 turns"):
        list(s.send("go"))
    check_index(s, reloads, "error", "invalid tool calls 2 turns in a row")
    assert list(s.send("again"))[-1].final == "fixed"
    assert reloads == []
    check_index(s, reloads, "idle")


def test_a_failed_run_reads_the_state_once(make, reloads: list[Any]) -> None:
    s = make([say("hi")])
    list(s.send("hello"))
    with pytest.raises(Exception, match="no reply scripted"):
        list(s.send("fail"))  # the model has nothing more to say
    assert len(reloads) == 1  # an error is rare: the index is written from a full read
    check_index(s, reloads, "error", "no reply scripted")
    count = len(reloads)
    s.model().replies.extend([say("back"), say("still here")])
    assert list(s.resume())[-1].final == "back"
    assert list(s.send("ok?"))[-1].final == "still here"
    assert len(reloads) == count + 1  # resume() asks whether there is anything to continue
    check_index(s, reloads, "idle")


def test_an_edited_call_is_what_the_session_knows(make, reloads: list[Any]) -> None:
    s = make([call(("note", {"text": "draft"})), say("ok")])
    list(s.send("note"))
    list(s.decide([{"type": "edit", "edited_action": {"name": "note", "args": {"text": "y"}}}]))
    check_index(s, reloads, "idle")
    ai = next(m for m in s._known().values["messages"] if isinstance(m, AIMessage) and m.tool_calls)
    assert ai.tool_calls[0]["args"] == {"text": "y"}


@pytest.mark.backends
def test_answers_are_indexed_for_search_when_the_run_ends(make) -> None:
    s = make(
        [
            say("plain answer"),
            call(("note", {"text": "n"}), text="asking first"),
            call(("peek", {"path": "p"}), text="on it"),
        ],
        Policy.build(flag_allow=["peek"]),
    )
    list(s.send("one"))
    list(s.send("two"))  # stops at the review
    with pytest.raises(Exception, match="no reply scripted"):  # after "on it" and its call
        list(s.decide([{"type": "approve"}]))
    texts = s.store._execute(
        "SELECT turn, role, text FROM agentcli_text WHERE thread_id = ?",
        (s.thread_id,),
    ).fetchall()
    assert sorted(tuple(t) for t in texts) == sorted(
        [
            (1, "user", "one"),
            (1, "assistant", "plain answer"),
            (2, "user", "two"),
            (2, "assistant", "asking first"),
            (2, "assistant", "on it"),
        ]
    )
    assert [r.thread_id for r in s.store.recent(search="on it")] == [s.thread_id]
