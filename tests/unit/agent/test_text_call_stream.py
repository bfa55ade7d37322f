"""The streamed answer while it may hold a text tool call: what is shown always adds up to
the answer as saved, and call markup is never shown."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage

from agentcli.agent.text_calls.recovery import with_text_calls
from agentcli.agent.text_calls.stream import HeldBack
from tests.helpers.text_tool_calls import CALL, MARKUP, OFFERED, PIECES

NOT_ALL = (
    "the answer contains no call and nothing that could begin one: every piece shows as it"
    " arrives, but for blanks at the end"
)


def play(pieces: list[str]) -> tuple[str, str, str]:
    """(shown while streaming, shown at the end, the saved answer's text)."""
    held = HeldBack(OFFERED)
    streamed = "".join(held.feed(piece) for piece in pieces)
    saved = with_text_calls(AIMessage("".join(pieces)), OFFERED)
    assert isinstance(saved.content, str)
    return streamed, held.rest(saved.content), saved.content


def test_plain_text_shows_as_it_streams() -> None:
    held = HeldBack(OFFERED)
    assert [held.feed(p) for p in ["Hello", " there", ", all ", "fine."]] == [
        "Hello",
        " there",
        ", all",
        " fine.",
    ], NOT_ALL
    assert held.rest("Hello there, all fine.") == ""


def test_text_from_a_marker_on_is_held_and_the_markup_never_shown() -> None:
    pieces = ["Let me ", "check.\n\n<tool", "_call>\n", CALL[:10], CALL[10:], "\n</tool_call>"]
    streamed, rest, saved = play(pieces)
    assert streamed == "Let me check."
    assert rest == "" and saved == "Let me check."


def test_a_tail_that_turns_out_not_to_be_a_marker_is_shown_after_all() -> None:
    held = HeldBack(OFFERED)
    assert held.feed("a <") == "a"
    assert held.feed("tool") == ""  # still maybe "<tool_call>"
    assert held.feed("box> b") == " <toolbox> b"


def test_a_tool_name_line_is_held_until_the_next_line_shows_it_is_no_chatglm_call() -> None:
    held = HeldBack(OFFERED)
    assert held.feed("Use the\n") == "Use the"
    assert held.feed("calcul") == ""
    assert held.feed("ator\n") == ""
    assert held.feed("to add.") == "\ncalculator\nto add."


def test_a_chatglm_call_in_one_piece_is_held() -> None:
    answer = "Sure.\ncalculator\n```python\ntool_call(expression='1')\n```"
    streamed, rest, saved = play([answer])
    assert (streamed, rest, saved) == ("Sure.", "", "Sure.")


def test_an_answer_that_may_be_a_bare_json_call_is_held_whole() -> None:
    streamed, rest, saved = play(["  ", CALL[:5], CALL[5:]])
    assert (streamed, rest, saved) == ("", "", "")
    streamed, rest, saved = play(['{"a": ', "1}"])  # not a call: shown once complete
    assert (streamed, rest) == ("", '{"a": 1}') and saved == '{"a": 1}'


def test_markup_that_is_no_call_is_shown_at_the_end() -> None:
    pieces = ["See ", "`<tool_call>`", " for the tag."]
    streamed, rest, saved = play(pieces)
    assert streamed == "See `"
    assert streamed + rest == saved == "See `<tool_call>` for the tag."


# whole calls in each format, with blanks or words before them, among the loose pieces
CALLS = [lead + markup for markup in MARKUP.values() for lead in ("", " ", "\n\n", "ok ")]
parts = st.sampled_from(CALLS) | st.sampled_from(PIECES) | st.text(max_size=6)
splits = st.lists(parts, max_size=20).flatmap(
    lambda parts: st.tuples(
        st.just("".join(parts)),
        st.lists(st.integers(0, max(len("".join(parts)), 1)), max_size=12),
    )
)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(splits)
def test_what_is_shown_is_always_the_saved_answer(case: tuple[str, list[int]]) -> None:
    """For any text cut into any pieces: what streamed is a prefix of the saved answer (so
    no markup the answer lost was ever shown), and with the rest it is the saved answer."""
    text, cuts = case
    bounds = sorted({0, len(text), *(c for c in cuts if c <= len(text))})
    pieces = [text[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]
    for split in (pieces, list(text)):  # as cut, and a character at a time
        streamed, rest, saved = play(split)
        assert saved.lstrip().startswith(streamed) or saved.startswith(streamed)
        assert streamed + rest in (saved, saved.lstrip())


def test_only_a_bounded_tail_waits_while_plain_text_streams() -> None:
    """What is not shown yet stays a few characters: each feed scans no more than that tail
    and its own piece."""
    held = HeldBack(OFFERED)
    shown = [held.feed("word ") for _ in range(50_000)]
    assert "".join(shown) == ("word " * 50_000).rstrip()
    assert len(held.pending) <= 1  # only the trailing blank waits
