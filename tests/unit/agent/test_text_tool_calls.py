"""Tool calls written as text (issue 16, item 4): each format, what is not a call, and the
parser's bounds."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage

from agentcli.agent.text_calls import formats
from agentcli.agent.text_calls.recovery import recover, with_text_calls
from tests.helpers.text_tool_calls import ARGS, CALL, MARKUP, OFFERED, PIECES


@pytest.mark.parametrize("markup", MARKUP.values(), ids=MARKUP.keys())
def test_each_format_is_recovered_and_its_markup_removed(markup: str) -> None:
    found = recover(f"Let me work it out.\n\n{markup}\n\nBack soon.", OFFERED)
    assert found is not None
    assert [(c["name"], c["args"]) for c in found.calls] == [("calculator", ARGS)]
    assert found.invalid == []
    assert found.text == "Let me work it out.\n\nBack soon."


@pytest.mark.parametrize(
    "answer",
    [CALL, f"```json\n{CALL}\n```", f"  {CALL}\n", f"[{CALL}]"],
    ids=["bare", "fenced", "blanks", "list"],
)
def test_a_bare_json_call_is_recovered_when_it_is_the_whole_answer(answer: str) -> None:
    found = recover(answer, OFFERED)
    assert found is not None and found.text == "" and found.formats == ["json"]
    assert [(c["name"], c["args"]) for c in found.calls] == [("calculator", ARGS)]


def test_every_call_gets_a_fresh_id_in_the_order_written() -> None:
    two = json.dumps({"name": "read_file", "arguments": {"path": "a"}})
    found = recover(f"<tool_call>{CALL}</tool_call>\n<tool_call>{two}</tool_call>", OFFERED)
    assert found is not None
    assert [c["name"] for c in found.calls] == ["calculator", "read_file"]
    ids = [c["id"] for c in found.calls]
    assert len(set(ids)) == 2 and all(i and i.startswith("call_") for i in ids)
    again = recover(f"<tool_call>{CALL}</tool_call>", OFFERED)
    assert again is not None and again.calls[0]["id"] not in ids


def test_several_llama_calls_joined_by_semicolons() -> None:
    text = (
        '<|python_tag|>{"name": "calculator", "parameters": {"expression": "1"}}; '
        '{"name": "read_file", "parameters": {"path": "x"}}<|eot_id|>'
    )
    found = recover(text, OFFERED)
    assert found is not None and found.text == ""
    assert [c["args"] for c in found.calls] == [{"expression": "1"}, {"path": "x"}]


NOT_CALLS = {
    "tool not offered": '<tool_call>{"name": "shell", "arguments": {"command": "id"}}</tool_call>',
    "one of two not offered": '[TOOL_CALLS][{"name": "calculator", "arguments": {}},'
    ' {"name": "shell", "arguments": {"command": "id"}}]',
    "function not offered": '<function=shell>{"command": "id"}</function>',
    "mistral name not offered": '[TOOL_CALLS]shell[ARGS]{"command": "id"}',
    "malformed json": '<tool_call>{"name": "calculator", "arguments": {"expression": </tool_call>',
    "no name": '<tool_call>{"arguments": {"expression": "1"}}</tool_call>',
    "in a code fence": f"Example:\n```\n<tool_call>{CALL}</tool_call>\n```\nThat is all.",
    "in inline code": f"Write `<tool_call>{CALL}</tool_call>` to call it.",
    "bare json in prose": f"The call would be {CALL}, but I will not make it.",
    "chatglm without name line": "```python\ntool_call(expression='1')\n```",
    "chatglm name not offered": "shell\n```python\ntool_call(command='id')\n```",
    "chatglm other function": "calculator\n```python\nrun(expression='1')\n```",
    "chatglm not literal": "calculator\n```python\ntool_call(expression=__import__('os'))\n```",
    "chatglm positional": "calculator\n```python\ntool_call('1')\n```",
    "plain prose": "The <tool_call> tag and [TOOL_CALLS] are how models call tools.",
}


@pytest.mark.parametrize("answer", NOT_CALLS.values(), ids=NOT_CALLS.keys())
def test_what_is_not_a_call_of_an_offered_tool_is_left_as_text(answer: str) -> None:
    assert recover(answer, OFFERED) is None


def test_no_tools_offered_recovers_nothing() -> None:
    assert recover(f"<tool_call>{CALL}</tool_call>", set()) is None


@pytest.mark.parametrize(
    "answer",
    [
        '<tool_call>{"name": "calculator", "arguments": 5}</tool_call>',
        '<tool_call>{"name": "calculator", "arguments": "not json"}</tool_call>',
        "<function=calculator>[1, 2]</function>",
    ],
)
def test_an_offered_tool_with_arguments_that_are_no_object_is_an_invalid_call(
    answer: str,
) -> None:
    found = recover(answer, OFFERED)
    assert found is not None and found.calls == [] and found.text == ""
    assert [bad["name"] for bad in found.invalid] == ["calculator"]
    assert found.invalid[0]["id"]


def test_a_payload_over_the_limit_is_left_as_text(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(formats, "MAX_PAYLOAD", 20)
    assert recover(f"<tool_call>{CALL}</tool_call>", OFFERED) is None
    monkeypatch.setattr(formats, "MAX_PAYLOAD", 1000)
    assert recover(f"<tool_call>{CALL}</tool_call>", OFFERED) is not None


def test_with_text_calls_keeps_native_calls_and_marks_recovered_ones() -> None:
    native = AIMessage(
        f"<tool_call>{CALL}</tool_call>",
        tool_calls=[{"name": "read_file", "args": {"path": "a"}, "id": "n1", "type": "tool_call"}],
    )
    assert with_text_calls(native, OFFERED) is native  # native calls win: the text is text
    plain = AIMessage("no call here")
    assert with_text_calls(plain, OFFERED) is plain
    answer = AIMessage(f"Sure.\n<tool_call>{CALL}</tool_call>", id="m1")
    recovered = with_text_calls(answer, OFFERED)
    assert isinstance(recovered, AIMessage)
    assert recovered.content == "Sure." and recovered.id == "m1"
    assert recovered.tool_calls[0]["args"] == ARGS
    assert recovered.response_metadata["text_tool_calls"] == ["hermes"]


texts = st.lists(st.sampled_from(PIECES) | st.text(max_size=5), max_size=40).map("".join)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts)
def test_arbitrary_text_never_crashes_and_only_offered_tools_are_called(text: str) -> None:
    found = recover(text, OFFERED)
    if found is not None:
        assert found.calls or found.invalid
        assert all(c["name"] in OFFERED for c in [*found.calls, *found.invalid])
        assert all(isinstance(c["args"], dict) for c in found.calls)
        assert len(found.text) <= len(text)


def _count_reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Patch the parser's one JSON seam to record how many characters each parse may read
    (from its start to the end of the text it was given)."""
    read: list[int] = []
    real = formats._raw

    def counted(text: str, at: int) -> tuple[Any, int]:
        try:
            value, end = real(text, at)
        except ValueError:
            read.append(len(text) - at)
            raise
        read.append(end - at)
        return value, end

    monkeypatch.setattr(formats, "_raw", counted)
    return read


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(PIECES), min_size=1, max_size=60).map("".join))
def test_json_parsing_reads_each_character_a_bounded_number_of_times(text: str) -> None:
    with pytest.MonkeyPatch.context() as patch:
        read = _count_reads(patch)
        recover(text, OFFERED)
    # the marked payloads are disjoint, string arguments are read once more, the bare
    # answer once: never more than a few passes over the text, however it is made
    assert sum(read) <= 4 * len(text) + 10


@pytest.mark.parametrize(
    "unit",
    [
        "<tool_call>",
        '<tool_call>{"name": "calculator", "arguments": {"expression": "',
        "[TOOL_CALLS][",
        "<|python_tag|>{};",
        "<function=calculator>{",
        "calculator\n```python\ntool_call(\n```\n",
        "`<tool_call>",
        "{" * 50,
    ],
)
def test_adversarial_repetition_stays_linear(unit: str, monkeypatch: pytest.MonkeyPatch) -> None:
    read = _count_reads(monkeypatch)
    text = unit * 2000
    recover(text, OFFERED)
    assert sum(read) <= 4 * len(text)
