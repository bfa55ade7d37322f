"""Every call of an answer has an id of its own before it is saved (model/call_ids.py)."""

from __future__ import annotations

from langchain_core.messages import AIMessage

from agentcli.agent.model.call_ids import with_call_ids


def answer(*ids: object, invalid: object = "bad") -> AIMessage:
    return AIMessage(
        "",
        tool_calls=[{"name": "shell", "args": {"n": n}, "id": i} for n, i in enumerate(ids)],
        invalid_tool_calls=[{"name": "shell", "args": "{", "id": invalid, "error": "json"}],
    )


def test_ids_that_are_already_their_own_are_kept_as_they_are() -> None:
    reply = answer("a", "b")
    assert with_call_ids(reply) is reply


def test_a_missing_or_repeated_id_gets_a_fresh_one_and_nothing_else_changes() -> None:
    reply = with_call_ids(answer(None, "a", "a", "", invalid="a"))
    assert isinstance(reply, AIMessage)
    ids = [c["id"] for c in reply.tool_calls] + [c["id"] for c in reply.invalid_tool_calls]
    assert ids[1] == "a" and len(set(ids)) == 5
    assert all(isinstance(i, str) and i.startswith("call_") for i in ids[:1] + ids[2:])
    assert [c["args"] for c in reply.tool_calls] == [{"n": n} for n in range(4)]


def test_an_answer_without_calls_is_left_alone() -> None:
    reply = AIMessage("hello")
    assert with_call_ids(reply) is reply


def test_an_id_that_is_not_valid_unicode_is_replaced() -> None:
    reply = with_call_ids(answer("ok", "bad\ud800"))
    assert isinstance(reply, AIMessage)
    assert reply.tool_calls[0]["id"] == "ok" and reply.tool_calls[1]["id"].startswith("call_")
