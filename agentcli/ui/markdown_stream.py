"""Streamed Markdown rendered block by block: each finished block is rendered once.

Re-rendering the whole answer at every chunk costs time in the square of its length. Here
the text is cut where a top-level block starts: in CommonMark a block before that line is
closed for good (link reference definitions, the one construct that reaches back, are
plain text in agentcli/ui/markdown.py), so the blocks before it render as they would in
the whole answer and are printed once. The open block stays live. An open fenced code
block at the top level is rendered line by line (agentcli/ui/code_rows.py: one row a
line, never hard-wrapped): its settled lines are printed as code rows (each batch
highlighted on its own, so a construct spanning two batches may be coloured differently),
the last line with text and any blank lines after it wait, as Rich strips the end of a
block. A half-received line that may yet be the closing fence is not shown at all: it
would be drawn as a line of code.

Only complete lines are read to find where a block starts: a half-received line can
look like a block (`#` is an empty heading) that the whole line is not (`#tag`).

Blocks render at `width`, which the live view pins while part of an open block is on the
screen for good: that part's rows are counted at the width they were printed at.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from markdown_it import MarkdownIt
from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.segment import Segment

from agentcli.terminal_text import visible
from agentcli.ui.code_rows import CodeRows, fit
from agentcli.ui.markdown import HIDING_RULES, ShownMarkdown

_PARSER = MarkdownIt().enable("strikethrough").enable("table").disable(HIDING_RULES)
_FENCE = re.compile(r"^( {0,3})(`{3,}|~{3,})")


class Line:
    """One rendered row as its segments: printed as they are, not laid out again."""

    __slots__ = ("segments",)

    def __init__(self, segments: list[Segment]) -> None:
        self.segments = segments

    @property
    def plain(self) -> str:
        return "".join(segment.text for segment in self.segments)

    def fitted(self, width: int) -> list[Line]:
        """The row as rows of `width` cells at most, without the blanks Rich pads it with
        (see code_rows.fit): a new Line even when it is one row."""
        return [Line(row) for row in fit(self.segments, width)]

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield from self.segments
        yield Segment.line()


@dataclass
class _Fence:
    """An open fenced code block at the top level: how it closes and how it is shown."""

    char: str
    length: int
    indent: int  # spaces of the opening fence, taken from each content line
    rows: CodeRows

    def closes(self, line: str) -> bool:
        stripped = line.rstrip("\n")
        lead = len(stripped) - len(stripped.lstrip(" "))
        rest = stripped[lead:]
        run = len(rest) - len(rest.lstrip(self.char))
        return lead <= 3 and run >= self.length and not rest[run:].strip(" \t")

    def may_close(self, partial: str) -> bool:
        """Whether a line received in part may still be the closing fence (or is it)."""
        rest = partial.lstrip(" ")
        return len(partial) - len(rest) <= 3 and not rest.rstrip(" \t").strip(self.char)

    def content(self, line: str) -> str:
        lead = len(line) - len(line.lstrip(" "))
        return line[min(lead, self.indent) :]


class MarkdownStream:
    """Markdown received in pieces. `settle()` gives the lines finished since its last call
    (to print for good), `live()` the open rest; `settle()` and then `close()` at the end
    give what one render of the whole text gives."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.tail = ""  # the text not settled yet
        self.fence: _Fence | None = None
        self.code: list[str] = []  # lines of the open fence not printed yet
        self.gap = False  # the last block settled asks for a blank line (Rich's new_line)
        self._before: dict[tuple[str, int], int] = {}  # rows of the context put before
        self.width = console.width

    def add(self, delta: str) -> None:
        self.tail += delta

    def settle(self) -> list[Line]:
        """The lines that can no longer change, rendered; they leave the live part."""
        out: list[Line] = []
        while True:
            if self.fence is not None:
                if not self._settle_fence(out):
                    return out
                continue
            end = self.tail.rfind("\n") + 1
            tops = _top_blocks(self.tail[:end])
            if not tops:
                return out
            first, kind = tops[-1]
            if first > 0:
                cut = _offset(self.tail, first)
                out.extend(self._render(self.tail[:cut]))
                if len(tops) > 1:  # else only blank lines went
                    self.gap = tops[-2][1] != "hr"  # Rich puts no blank line after a rule
                self.tail = self.tail[cut:]
            if kind != "fence" or not self._open_fence():
                return out
            if self.gap:  # a fence is a leaf block
                out.append(Line([]))
            out.append(self._padding())  # the code block's top padding
            self.gap = False

    def live(self) -> list[Line]:
        """The open part as it would render now (it may still change)."""
        if self.fence is not None:
            code = self.code
            if self.tail and not self.fence.may_close(self.tail):
                code = code + [self.fence.content(self.tail)]
            return self._code_rows("".join(code).rstrip())
        return self._render(_without_fence_start(self.tail)) if self.tail.strip() else []

    def close(self) -> list[Line]:
        """The end of the text: the rest, rendered for good."""
        if self.fence is not None and self.tail and self.fence.closes(self.tail):
            # the text ends on the closing fence, with no newline after it: it closes all
            # the same (settle reads whole lines only)
            self.tail += "\n"
            return self.settle() + self.close()
        if self.fence is not None:  # the text ends inside the block: all of it is code
            code = self.code + [self.fence.content(self.tail)] if self.tail else self.code
            lines = self._code_rows("".join(code).rstrip()) + [self._padding()]
        else:
            lines = self._render(self.tail) if self.tail.strip() else []
        self.tail, self.fence, self.code, self.gap = "", None, [], False
        return lines

    def _open_fence(self) -> bool:
        """Enter an open fence: its opening line is the first of the tail."""
        newline = self.tail.find("\n")
        opening = self.tail[: newline + 1]
        match = _FENCE.match(opening)
        if match is None:
            return False
        marker = match.group(2)
        info = opening[match.end() :].strip()
        if marker[0] == "`" and "`" in info:
            return False
        tokens = _PARSER.parse(visible(opening))
        lexer = (tokens[0].info if tokens else "").partition(" ")[0] or "text"
        self.fence = _Fence(marker[0], len(marker), len(match.group(1)), CodeRows(lexer))
        self.tail = self.tail[newline + 1 :]
        return True

    def _settle_fence(self, out: list[Line]) -> bool:
        """Print the fence's lines that cannot change; True when the fence closed."""
        assert self.fence is not None
        end = self.tail.rfind("\n") + 1
        closed = False
        for line in self.tail[:end].splitlines(keepends=True):
            self.tail = self.tail[len(line) :]
            if self.fence.closes(line):
                closed = True
                break
            self.code.append(self.fence.content(line))
        if closed:
            code, self.code = "".join(self.code).rstrip(), []
            out.extend(self._code_rows(code))
            out.append(self._padding())
            self.fence, self.gap = None, True
            return True
        last = max((i for i, line in enumerate(self.code) if line.strip()), default=0)
        if last > 0:
            out.extend(self._code_rows("".join(self.code[:last])[:-1]))  # one row a line
            self.code = self.code[last:]
        return False

    def _code_rows(self, code: str) -> list[Line]:
        """Code as Rich's Markdown colours it, one row a line (see code_rows.py)."""
        assert self.fence is not None
        shown = [visible(visible(line), marked=True) for line in code.split("\n")]
        return [Line(row) for row in self.fence.rows.rows(shown, self.width)]

    def _padding(self) -> Line:
        """The blank row above and below a code block's lines."""
        assert self.fence is not None
        return Line(self.fence.rows.padding(self.width))

    def _render(self, text: str) -> list[Line]:
        """`text`, whole blocks, as it renders after the blocks settled before it: Rich puts
        a blank line above a block when the element closed before it asks for one, so a
        block that does so (or a rule, which does not) goes first and its rows are cut."""
        before = "x\n\n" if self.gap else "---\n\n"
        if (before, self.width) not in self._before:
            self._before[before, self.width] = len(self._lines(ShownMarkdown(before)))
        # marks for controls; links as "text (url)", never a hidden OSC 8 target; HTML,
        # comments and entities as the text they are (see agentcli/ui/markdown.py)
        rows = self._lines(ShownMarkdown(before + visible(text)))
        return rows[self._before[before, self.width] :]

    def _lines(self, renderable: RenderableType) -> list[Line]:
        options = self.console.options.update(width=self.width)
        return [Line(line) for line in self.console.render_lines(renderable, options, pad=False)]


def _without_fence_start(text: str) -> str:
    """`text` without its half-received last line when that line may be a fence (```` `` ````
    in a list item, `> ~~` in a quote): until it is whole it may close a code block, and
    it would be drawn as a line of its code."""
    start = text.rfind("\n") + 1
    partial = text[start:].strip(" \t>")
    if partial and (not partial.strip("`") or not partial.strip("~")):
        return text[:start]
    return text


def _top_blocks(text: str) -> list[tuple[int, str]]:
    """The first line and type of each top-level block of `text`."""
    if not text.strip():
        return []
    tokens = _PARSER.parse(visible(text))
    return [(t.map[0], t.type) for t in tokens if t.level == 0 and t.nesting >= 0 and t.map]


def _offset(text: str, line: int) -> int:
    """Where line number `line` of `text` starts."""
    at = 0
    for _ in range(line):
        at = text.index("\n", at) + 1
    return at
