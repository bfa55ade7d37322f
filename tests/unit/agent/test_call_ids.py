"""Every call of an answer has an id of its own before it is saved (model/call_ids.py)."""

from __future__ import annotations

from langchain_core.messages import AIMessage

from agentcli.agent.model.call_ids import MAX_CHARS, SAFE, safe_id, with_call_ids


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


def test_an_id_that_is_not_valid_unicode_is_made_safe() -> None:
    reply = with_call_ids(answer("ok", "bad\ud800"))
    assert isinstance(reply, AIMessage)
    assert [c["id"] for c in reply.tool_calls] == ["ok", "bad_"]


def test_an_id_keeps_only_the_safe_alphabet_and_is_never_another_calls() -> None:
    reply = with_call_ids(answer("call_1@0123456789ab", "call_1_0123456789ab", " x", "-rf"))
    assert isinstance(reply, AIMessage)
    ids = [c["id"] for c in reply.tool_calls]
    assert ids[0] == "call_1_0123456789ab" and ids[2:] == ["_x", "call_-rf"]
    assert ids[1] != ids[0] and SAFE.fullmatch(ids[1]) and len(set(ids)) == 4


def test_safe_ids_are_left_alone_and_long_ones_are_cut() -> None:
    assert safe_id("Ab-9_z") == "Ab-9_z" and safe_id("functions.shell:0") == "functions_shell_0"
    assert safe_id("x" * 500) == "x" * MAX_CHARS and SAFE.fullmatch(safe_id("\u202e" * 9))
