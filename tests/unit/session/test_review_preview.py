"""The review preview (agentcli/session/review_preview.py): kept when a run parks, dropped
by any new status, read back strictly, and equal to what the session makes from its state."""

from __future__ import annotations

import json

import pytest

from agentcli.events import ReviewRequest
from agentcli.session.review_preview import Preview, preview_text
from agentcli.thread_rows import ThreadStatus
from tests.helpers.fakes import call, say


@pytest.mark.backends
def test_a_parked_run_keeps_the_preview_its_state_gives(make) -> None:
    s = make([call(("note", {"text": "hi"})), say("noted")])
    assert any(isinstance(event, ReviewRequest) for event in s.send("note hi"))
    kept = s.store.preview(s.thread_id)
    assert kept is not None and kept == preview_text(s.values(), s.pending())
    preview = Preview.read(kept)
    assert preview is not None and preview.earlier == 0
    assert [c["name"] for c in preview.calls] == ["note"] and preview.calls[0]["args"] == {
        "text": "hi"
    }
    assert [e["role"] for e in preview.entries] == ["user", "assistant"]
    list(s.decide([{"type": "approve"}]))  # the run goes on: a new status, no preview
    assert s.store.preview(s.thread_id) is None


@pytest.mark.backends
def test_any_new_status_drops_the_preview_and_delete_removes_it(make) -> None:
    s = make([call(("note", {"text": "hi"}))])
    list(s.send("note hi"))
    store, thread = s.store, s.thread_id
    assert store.preview(thread) is not None
    store.update(thread, title="renamed")  # not a status: kept
    assert store.preview(thread) is not None
    store.update(thread, status=ThreadStatus.AWAITING_APPROVAL)  # even the same status
    assert store.preview(thread) is None
    store.keep_preview(thread, "{}")
    store.release()
    store.delete(thread)
    assert store.preview(thread) is None


def test_the_preview_holds_no_tool_result() -> None:
    """The recap shows a call's status, never its result: the preview keeps none."""
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    secret_output = "the whole file, long and private"
    values = {
        "messages": [
            HumanMessage("read it"),
            AIMessage("", tool_calls=[{"id": "c1", "name": "read_file", "args": {"path": "x"}}]),
            ToolMessage(secret_output, tool_call_id="c1"),
            AIMessage("", tool_calls=[{"id": "c2", "name": "note", "args": {"text": "a"}}]),
        ],
        "audit": [{"call_id": "c1", "decision": "approved", "by": "person", "who": "person"}],
    }
    review = ReviewRequest("t", [{"id": "c2", "name": "note", "args": {"text": "a"}}])
    text = preview_text(values, review)
    assert text is not None and secret_output not in text
    preview = Preview.read(text)
    assert preview is not None
    [first] = preview.entries[1]["calls"]
    assert first == {
        "tool": "read_file",
        "args": {"path": "x"},
        "status": "success",
        "decision": {"decision": "approved"},
    }


def test_a_plan_review_and_no_review_have_no_preview() -> None:
    values = {"messages": []}
    plan = ReviewRequest("t", [{"id": "p", "name": "plan", "args": {}}], plan=[{"id": 1}])
    assert preview_text(values, plan) is None
    assert preview_text(values, None) is None
    assert preview_text(values, ReviewRequest("t", [])) is None
    not_json = ReviewRequest("t", [{"id": "c", "name": "note", "args": {"x": float("nan")}}])
    assert preview_text(values, not_json) is None


@pytest.mark.parametrize(
    "text",
    [
        None,
        "",
        "not json",
        "[" * 100_000,  # deeper than the parser goes
        "[]",
        '{"earlier": 0, "entries": []}',
        '{"earlier": "0", "entries": [], "calls": [{"name": "a", "args": {}}]}',
        '{"earlier": 0, "entries": [], "calls": []}',
        '{"earlier": 0, "entries": [], "calls": ["a"]}',
        '{"earlier": 0, "entries": [], "calls": [{"name": 1, "args": {}}]}',
        '{"earlier": 0, "entries": [], "calls": [{"name": "a"}]}',
        '{"earlier": 0, "entries": [{"text": "no role"}], "calls": [{"name": "a", "args": {}}]}',
    ],
)
def test_what_is_not_a_preview_draws_nothing(text: str | None) -> None:
    assert Preview.read(text) is None


def test_a_well_formed_preview_is_read() -> None:
    text = json.dumps(
        {
            "earlier": 2,
            "entries": [{"role": "user", "text": "hi"}],
            "calls": [{"name": "a", "args": {}}],
        }
    )
    assert Preview.read(text) == Preview(
        2, [{"role": "user", "text": "hi"}], [{"name": "a", "args": {}}]
    )
