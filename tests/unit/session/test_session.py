"""The reviewed agent loop, driven through Session with a scripted fake chat model."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from agentcli.agent.model.chat_model import cost_usd
from agentcli.errors import RunStopped, UsageError
from agentcli.events import AssistantMessage, Done, ReviewRequest, ToolResult
from agentcli.policy.approval_policy import Policy
from agentcli.session.local import Session
from tests.helpers.fakes import call, say
from tests.unit.conftest import RAN


def drain(events) -> list:
    return list(events)


def review_of(events: list) -> ReviewRequest:
    reviews = [e for e in events if isinstance(e, ReviewRequest)]
    assert len(reviews) == 1
    assert events[-1].status == "awaiting_approval"
    return reviews[0]


def tool_messages(session: Session) -> dict[str, ToolMessage]:
    return {
        m.tool_call_id: m for m in session.state().values["messages"] if isinstance(m, ToolMessage)
    }


def test_approve_runs_the_call_and_the_model_reads_its_result(make) -> None:
    s = make([call(("note", {"text": "hi"})), say("done")])
    review = review_of(drain(s.send("write hi")))
    assert RAN == []  # nothing ran before the decision
    request = review.action_requests[0]
    assert (request["name"], request["args"]) == ("note", {"text": "hi"})
    events = drain(s.decide([{"type": "approve"}]))
    assert RAN == [{"text": "hi", "times": 1}]
    assert [e.content for e in events if isinstance(e, ToolResult)] == ["noted 'hi' x1"]
    assert events[-1] == Done(s.thread_id, "done", "done", {})
    assert isinstance(s.model().calls[-1][-1], ToolMessage)
    assert s.store.resolve(s.thread_id).status == "idle"


def test_edit_runs_the_new_arguments_and_the_history_shows_them(make) -> None:
    s = make([call(("note", {"text": "draft"})), say("ok")])
    call_id = review_of(drain(s.send("note"))).action_requests[0]["id"]
    edited = {"name": "note", "args": {"text": "final", "times": 2}}
    drain(s.decide([{"type": "edit", "edited_action": edited}]))
    assert RAN == [{"text": "final", "times": 2}]
    ai = next(m for m in s.state().values["messages"] if isinstance(m, AIMessage) and m.tool_calls)
    assert ai.tool_calls[0]["args"] == {"text": "final", "times": 2}
    assert tool_messages(s)[call_id].content == "noted 'final' x2"


def test_feedback_is_given_verbatim_and_the_call_does_not_run(make) -> None:
    s = make([call(("note", {"text": "x"})), say("understood")])
    call_id = review_of(drain(s.send("go"))).action_requests[0]["id"]
    drain(s.decide([{"type": "reject", "message": "use a longer note, please"}]))
    assert RAN == []
    assert tool_messages(s)[call_id].content == "use a longer note, please"
    assert s.model().calls[-1][-1].content == "use a longer note, please"


def test_reject_tells_the_model_and_does_not_run(make) -> None:
    s = make([call(("note", {"text": "x"})), say("fine")])
    call_id = review_of(drain(s.send("go"))).action_requests[0]["id"]
    events = drain(s.decide([{"type": "reject"}]))
    assert RAN == []
    assert tool_messages(s)[call_id].content == "rejected by the user"
    assert events[-1].final == "fine"


def test_two_calls_of_one_turn_get_their_own_decisions(make) -> None:
    s = make([call(("note", {"text": "a"}), ("peek", {"path": "b"})), say("both handled")])
    review = review_of(drain(s.send("two things")))
    first, second = (r["id"] for r in review.action_requests)
    drain(s.decide([{"type": "reject"}, {"type": "approve"}]))
    assert RAN == [{"path": "b"}]
    messages = tool_messages(s)
    assert messages[first].content == "rejected by the user"
    assert messages[second].content == "looked at b"


def test_invalid_arguments_go_back_to_the_model_without_a_review(make) -> None:
    bad_json = AIMessage(
        content="",
        invalid_tool_calls=[
            {
                "name": "note",
                "args": '{"text": ',
                "id": "bad-1",
                "error": "Expecting value",
                "type": "invalid_tool_call",
            }
        ],
    )
    s = make(
        [
            bad_json,
            call(("note", {"txt": "typo"})),
            call(("nope", {})),
            call(("note", {"text": "ok"})),
            say("done"),
        ],
        max_invalid_turns=4,
    )
    events = drain(s.send("go"))
    errors = [e for e in events if isinstance(e, ToolResult)]
    assert [e.status for e in errors] == ["error", "error", "error"]
    assert "not valid JSON" in errors[0].content
    assert "'text': Field required" in errors[1].content
    assert "unknown tool" in errors[2].content and "note, peek" in errors[2].content
    review = review_of(events)  # only the corrected call reaches the person
    assert review.action_requests[0]["args"] == {"text": "ok"}
    drain(s.decide([{"type": "approve"}]))
    assert RAN == [{"text": "ok", "times": 1}]


def test_consecutive_invalid_turns_stop_the_run_and_the_thread_continues(make) -> None:
    bad = [call(("note", {"wrong": i})) for i in range(3)]
    s = make([*bad, say("sorry, fixed")], max_invalid_turns=3)
    with pytest.raises(RunStopped, match="invalid tool calls 3 turns in a row"):
        drain(s.send("go"))
    assert s.store.resolve(s.thread_id).status == "error"
    events = drain(s.send("try again"))
    assert events[-1].final == "sorry, fixed"


def test_step_limit_ends_a_runaway_loop(make) -> None:
    loop = [call(("peek", {"path": str(i)})) for i in range(5)]
    s = make(loop, Policy.build(auto_approve=True), max_steps=3)
    with pytest.raises(RunStopped, match=r"stopped after 3 model steps \(max_steps\)"):
        drain(s.send("loop"))
    assert len(RAN) == 3
    assert s.store.resolve(s.thread_id).status == "error"


def test_policy_allows_and_denies_without_asking(make) -> None:
    s = make(
        [call(("note", {"text": "n"}), ("peek", {"path": "p"})), say("ok")],
        Policy.build(flag_allow=["peek"], flag_deny=["note"]),
    )
    events = drain(s.send("go"))
    assert not any(isinstance(e, ReviewRequest) for e in events)
    assert RAN == [{"path": "p"}]
    denied = next(e for e in events if isinstance(e, ToolResult) and e.name == "note")
    assert "denied by flag --deny" in denied.content


def test_always_allows_the_tool_for_the_rest_of_the_thread(make) -> None:
    s = make([call(("peek", {"path": "1"})), call(("peek", {"path": "2"})), say("done")])
    review_of(drain(s.send("go")))
    events = drain(s.decide([{"type": "approve", "always": True}]))
    assert not any(isinstance(e, ReviewRequest) for e in events)
    assert RAN == [{"path": "1"}, {"path": "2"}]
    assert s.state().values["allowed_tools"] == ["peek"]


def test_always_with_a_match_allows_only_the_calls_it_matches(make) -> None:
    s = make(
        [
            call(("peek", {"path": "a/1"})),
            call(("peek", {"path": "a/2"}), ("peek", {"path": "b/3"})),
            say("done"),
        ]
    )
    review_of(drain(s.send("go")))
    review = review_of(drain(s.decide([{"type": "approve", "always": True, "match": "a/*"}])))
    assert [r["args"] for r in review.action_requests] == [{"path": "b/3"}]  # a/2 allowed
    allowed = [r for r in s.state().values["audit"] if r["args"] == {"path": "a/2"}]
    assert [(r["decision"], r["by"]) for r in allowed] == [
        ("allowed", "always for this thread (peek a/*)")
    ]
    assert s.state().values["allowed_tools"] == ['["peek", "a/*"]']
    drain(s.decide([{"type": "approve"}]))
    # a/2 and b/3 run in one step, side by side: in either order
    assert RAN[0] == {"path": "a/1"}
    assert sorted(r["path"] for r in RAN[1:]) == ["a/2", "b/3"]


@pytest.mark.backends
def test_a_pending_review_survives_the_process(make) -> None:
    first = make([call(("note", {"text": "later"}))])
    review_of(drain(first.send("go")))
    first.store.close()
    second = make([say("resumed")])
    second.open(first.thread_id[:6])
    pending = second.pending()
    assert pending is not None and pending.action_requests[0]["args"] == {"text": "later"}
    with pytest.raises(UsageError, match="awaiting review"):
        second.send("something else")
    events = drain(second.decide([{"type": "approve"}]))
    assert RAN == [{"text": "later", "times": 1}]
    assert events[-1].final == "resumed"


def test_a_failed_model_call_keeps_the_message_and_can_be_retried(make) -> None:
    s = make([])  # the model has nothing to say: the call fails
    with pytest.raises(Exception, match="no reply scripted"):
        drain(s.send("remember me"))
    row = s.store.resolve(s.thread_id)
    assert row.status == "error" and "no reply scripted" in (row.last_error or "")
    assert [m.content for m in s.state().values["messages"]] == ["remember me"]
    s.model().replies.append(say("here I am"))
    events = drain(s.resume())
    assert events[-1].final == "here I am"
    assert isinstance(s.model().calls[-1][-1], HumanMessage)
    assert s.store.resolve(s.thread_id).status == "idle"


def test_usage_and_assistant_events(make) -> None:
    reply = say("hello")
    reply.usage_metadata = {"input_tokens": 7, "output_tokens": 3, "total_tokens": 10}
    s = make([reply])
    events = drain(s.send("hi"))
    assert any(isinstance(e, AssistantMessage) and e.text == "hello" for e in events)
    tokens = {"input_tokens": 7, "output_tokens": 3, "total_tokens": 10}
    priced = cost_usd(s.settings, s.settings.model, tokens)  # genai-prices knows gpt-4o-mini
    assert priced is not None and events[-1].usage == {**tokens, "cost_usd": priced}


def test_a_resume_answers_what_was_asked_whatever_the_new_flags(make) -> None:
    first = make(
        [call(("peek", {"path": "p"}), ("note", {"text": "n"}))], Policy.build(flag_allow=["peek"])
    )
    review = review_of(drain(first.send("go")))
    assert [r["name"] for r in review.action_requests] == ["note"]
    first.store.close()
    second = make([say("both ran")])  # another process, without --approve peek
    second.open(first.thread_id)
    assert [r["name"] for r in second.pending().action_requests] == ["note"]
    events = drain(second.decide([{"type": "approve"}]))
    assert events[-1].final == "both ran"
    assert sorted(RAN, key=str) == [{"path": "p"}, {"text": "n", "times": 1}]


def test_stopping_on_invalid_calls_still_answers_every_call(make) -> None:
    turns = [call(("note", {"bad": i}), ("peek", {"path": str(i)})) for i in range(2)]
    s = make([*turns, say("recovered")], Policy.build(auto_approve=True), max_invalid_turns=2)
    with pytest.raises(RunStopped):
        drain(s.send("go"))
    messages = s.state().values["messages"]
    asked = {c["id"] for m in messages if isinstance(m, AIMessage) for c in m.tool_calls}
    answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    assert asked == answered
    assert len(RAN) == 1  # the valid call of the first turn ran; the second was not run
    assert drain(s.send("again"))[-1].final == "recovered"


def test_a_call_id_the_model_server_reuses_is_a_new_call(make) -> None:
    """Some OpenAI-compatible servers number calls per response ("call_0" every turn): the
    journal must not take the second turn's call for the first one run again."""

    def same_id(text: str) -> AIMessage:
        calls = [{"name": "note", "args": {"text": text}, "id": "call_0", "type": "tool_call"}]
        return AIMessage(content="", tool_calls=calls)

    replies = [same_id("one"), say("noted one"), same_id("two"), say("noted two")]
    session = make(replies, Policy.build(auto_approve=True))
    for text in ("first", "second"):
        events = list(session.send(text))
        assert not any(isinstance(e, ReviewRequest) for e in events)
        assert isinstance(events[-1], Done) and events[-1].status == "done"
    assert [r["text"] for r in RAN] == ["one", "two"]
