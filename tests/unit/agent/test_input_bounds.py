"""Messages and review answers are bounded however their bytes arrive (agent/input_bounds.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from agentcli.agent.input_bounds import (
    MAX_EDIT_BYTES,
    MAX_LABEL_CHARS,
    MAX_MESSAGE_BYTES,
    MAX_STORED_BYTES,
    bounded,
    clipped,
)
from agentcli.agent.review.answers import decisions_in

NOTE = "[agentcli: this message was clipped to"


def _size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, default=str).encode("utf-8", "surrogatepass"))


def _nested(depth: int) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize(
    "text",
    [
        "a" * 5_000_000,
        "é" * 2_500_000,  # 2 bytes a character: a bound in characters lets twice through
        "€" * 1_700_000,  # 3 bytes
        "😀" * 1_300_000,  # 4 bytes
        "a" + "😀" * 200_000,  # the cut falls inside a character
        "\ud800" * 200_000,  # lone surrogates (JSON allows "\ud800"): measured, not a crash
    ],
)
def test_a_text_over_the_bound_is_cut_at_a_character_and_says_so(text: str) -> None:
    short = clipped(text)
    assert len(short.encode("utf-8", "surrogatepass")) <= MAX_MESSAGE_BYTES
    assert text.startswith(short[: short.index("\n\n[agentcli")])
    assert short.endswith(
        "bytes of {:,}: the rest was dropped]".format(len(text.encode("utf-8", "surrogatepass")))
    )
    assert clipped(short) is short  # clipping twice changes nothing


def test_a_text_within_the_bound_is_the_same_object() -> None:
    text = "é" * (MAX_MESSAGE_BYTES // 2)
    assert clipped(text) is text
    message = HumanMessage(text)
    assert bounded(message) is message


@pytest.mark.parametrize(
    "content",
    [
        [{"type": "text", "text": "hi"}, {"type": "text", "text": "é" * 2_500_000}],
        ["hi", "x" * 5_000_000],
        [
            {"type": "text", "text": "hi"},
            {"type": "image_url", "image_url": {"url": "A" * 5_000_000}},
        ],
        [{"type": "text", "text": "hi"}, {"type": "x", "v": _nested(100_000)}],  # too deep for JSON
        [{"type": "text", "text": "hi", "extra": "x" * 5_000_000}],  # a text part's extra key
        [{"type": "text", "text": "hi"}] * 200_000,  # many small parts
        [{"type": "t" * 5_000_000}],  # a huge type name
    ],
)
def test_content_parts_over_the_bound_are_cut_and_named(content: list[Any]) -> None:
    message = bounded(HumanMessage(content=content))
    assert _size(message.content) <= MAX_MESSAGE_BYTES
    assert NOTE in message.content[-1]["text"]
    assert bounded(message) is message or bounded(message).content == message.content


def test_a_clients_dict_message_and_its_extra_fields_are_bounded() -> None:
    sent = {
        "role": "user",
        "content": "x" * 5_000_000,
        "additional_kwargs": {"k": "x" * 5_000_000},
        "name": "n" * 10_000,
        "id": "i" * 10_000,
    }
    got = bounded(sent)
    assert len(got["content"].encode()) <= MAX_MESSAGE_BYTES and NOTE in got["content"]
    assert got["additional_kwargs"] == {} and len(got["name"]) == MAX_LABEL_CHARS
    assert len(got["id"]) < MAX_LABEL_CHARS


def test_other_messages_have_the_larger_bound_and_keep_their_calls() -> None:
    answer = AIMessage(
        "a" * (MAX_MESSAGE_BYTES * 2), tool_calls=[{"name": "t", "args": {}, "id": "1"}]
    )
    assert bounded(answer) is answer  # a long answer is not a person's message
    huge = bounded(AIMessage("a" * (MAX_STORED_BYTES + 1), tool_calls=answer.tool_calls))
    assert len(huge.content) <= MAX_STORED_BYTES and huge.tool_calls == answer.tool_calls
    result = bounded(
        ToolMessage("r" * 5_000_000, tool_call_id="c" * 10_000, artifact="a" * 5_000_000)
    )
    assert len(result.content) <= MAX_STORED_BYTES and result.artifact is None
    assert result.tool_call_id == "c" * MAX_LABEL_CHARS


def test_a_review_answers_texts_are_clipped_and_a_huge_edit_refused() -> None:
    [decision] = decisions_in(
        {"decisions": [{"type": "reject", "message": "é" * 2_500_000, "who": "w" * 10_000}]}, 1
    )
    assert len(decision["message"].encode()) <= MAX_MESSAGE_BYTES and NOTE in decision["message"]
    assert len(decision["who"]) == MAX_LABEL_CHARS
    for args in ({"content": "x" * MAX_EDIT_BYTES}, {"content": _nested(100_000)}):
        edit = {"type": "edit", "edited_action": {"name": "write_file", "args": args}}
        with pytest.raises(ValueError, match="an edit may carry"):
            decisions_in({"decisions": [edit]}, 1)
