"""The block-by-block renderer ends with what one render of the whole answer shows."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.console import Console
from rich.segment import Segment
from rich.style import Style

from agentcli.terminal_text import visible
from agentcli.ui.markdown import ShownMarkdown
from agentcli.ui.markdown_stream import Line, MarkdownStream

WIDTH = 60
DOCUMENTS = [
    "```\n```",  # the text ends on the closing fence, no newline after it
    "```py\nx = 1\n```",
    "# Title\n\nSome *text* here\nand more.\n\n- a\n- b\n  - c\n    1. deep\n\n"
    "```python\ndef f():\n    return '''a\nb'''\n\n\n```\n\n"
    "| a | b |\n|---|---|\n| 1 | 2 |\n\n---\nafter rule\n",
    "para\n```\nopen fence, never closed\n\n  x \n\n",
    "1. one\n2. two\n\n   more\n3. three\n\ntext\n#tag\n\n> quote\nlazy\n\n"
    "~~~~\ncode ~~~\n~~~~~\nend",
    "Setext\n===\n\n  ```js\n  indented();\n    more();\n  ```\n    code block\n\n***\n---\n",
    "a | b\n--|--\n1 | 2\nnot a row\n\n- [link](http://x) <b>html</b> &amp;\n\n\x1b[2Jesc\u202e\n",
    "```\n" + "".join(f"line {i}\n" for i in range(60)) + "```\n\nafter\n",
    "- item\n\n  ```\n  fenced in a list\n  ```\n- next\n",
]


def console() -> Console:
    return Console(width=WIDTH, force_terminal=True, color_system="truecolor")


def one_shot(text: str) -> list[Line]:
    c = console()
    return [Line(line) for line in c.render_lines(ShownMarkdown(visible(text)), pad=False)]


def streamed(text: str, cuts: list[int], look: bool = True) -> list[Line]:
    stream, out, start = MarkdownStream(console()), [], 0
    for cut in [*sorted(set(cuts)), len(text)]:
        stream.add(text[start:cut])
        start = cut
        out += stream.settle()
        if look:
            stream.live()
    return out + stream.settle() + stream.close()


def plain(lines: list[Line]) -> list[str]:
    return [line.plain for line in lines]


def styles(lines: list[Line]) -> list[list[tuple[str, Style | None]]]:
    """Each character of each line with its style: what the terminal shows."""
    return [[(c, s.style) for s in line.segments for c in s.text] for line in lines]


def test_a_line_prints_its_segments() -> None:
    c = Console(width=10, force_terminal=True, record=True)
    c.print(Line([Segment("ab", Style(bold=True)), Segment("c")]))
    assert c.export_text() == "abc\n"


def test_a_live_row_fitted_ends_on_its_text_not_on_padding() -> None:
    """A live row padded to the width would reach the last column: a terminal narrowed
    while it draws wraps it (or reflows it), and the next redraw goes back too few rows."""
    stream = MarkdownStream(console())
    stream.add("- item one\n- item two")
    rows = [row for line in stream.live() for row in line.fitted(WIDTH)]
    assert [row.plain for row in rows if row.plain] == [" • item one", " • item two"]


def test_each_document_in_one_piece_and_in_single_characters() -> None:
    for text in DOCUMENTS:
        assert plain(streamed(text, [])) == plain(one_shot(text))
        assert plain(streamed(text, list(range(len(text))))) == plain(one_shot(text))


def test_finished_blocks_are_printed_before_the_end() -> None:
    stream = MarkdownStream(console())
    stream.add("First paragraph.\n\n```\n" + "code\n" * 20)
    settled = plain(stream.settle())
    assert settled[0].startswith("First paragraph.")
    assert sum(line.strip() == "code" for line in settled) == 19  # the last one waits
    assert len(stream.live()) == 1


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    index=st.integers(0, len(DOCUMENTS) - 1),
    cuts=st.lists(st.floats(0, 1, allow_nan=False), max_size=25),
    look=st.booleans(),
)
def test_cut_anywhere_the_screen_ends_as_one_render(
    index: int, cuts: list[float], look: bool
) -> None:
    text = DOCUMENTS[index]
    at = [int(c * len(text)) for c in cuts]
    got, want = streamed(text, at, look), one_shot(text)
    assert plain(got) == plain(want)
    if "```python" not in text:  # highlighting is per batch: multi-line strings differ
        assert styles(got) == styles(want)


@settings(max_examples=100, deadline=None)
@given(
    text=st.lists(
        st.sampled_from(
            ["text", "*em*", "- ", "1. ", "  ", "```", "~~~", "> ", "# ", "---", "|", "\n", "\n\n"]
        ),
        max_size=40,
    ).map("".join),
    cuts=st.lists(st.integers(0, 200), max_size=10),
)
def test_generated_markdown_cut_anywhere(text: str, cuts: list[int]) -> None:
    assert plain(streamed(text, [c for c in cuts if c <= len(text)])) == plain(one_shot(text))
