"""Streamed Markdown rendered block by block: each finished block is rendered once.

Re-rendering the whole answer at every chunk costs time in the square of its length. Here
the text is cut where a top-level block starts: in CommonMark a block before that line is
closed for good (link reference definitions, the one construct that reaches back, are
plain text in agentcli/ui/markdown.py), so the blocks before it render as they would in
the whole answer and are printed once. The open block stays live. An open fenced code
block at the top level is rendered line by line: its settled lines are printed as code
rows (each batch highlighted on its own, so a construct spanning two batches may be
coloured differently), the last line with text and any blank lines after it wait, as
Rich strips the end of a block.

Only complete lines are read to find where a block starts: a half-received line can
look like a block (`#` is an empty heading) that the whole line is not (`#tag`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from markdown_it import MarkdownIt
from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.segment import Segment
from rich.syntax import Syntax

from agentcli.terminal_text import visible
from agentcli.ui.markdown import HIDING_RULES, ShownMarkdown

_PARSER = MarkdownIt().enable("strikethrough").enable("table").disable(HIDING_RULES)
CODE_THEME = "monokai"  # rich.markdown.Markdown's default, which ShownMarkdown keeps
_FENCE = re.compile(r"^( {0,3})(`{3,}|~{3,})")


class Line:
    """One rendered row as its segments: printed as they are, not laid out again."""

    __slots__ = ("segments",)

    def __init__(self, segments: list[Segment]) -> None:
        self.segments = segments

    @property
    def plain(self) -> str:
        return "".join(segment.text for segment in self.segments)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield from self.segments
        yield Segment.line()


@dataclass
class _Fence:
    """An open fenced code block at the top level: how it closes and how it is shown."""

    char: str
    length: int
    indent: int  # spaces of the opening fence, taken from each content line
    lexer: str

    def closes(self, line: str) -> bool:
        stripped = line.rstrip("\n")
        lead = len(stripped) - len(stripped.lstrip(" "))
        rest = stripped[lead:]
        run = len(rest) - len(rest.lstrip(self.char))
        return lead <= 3 and run >= self.length and not rest[run:].strip(" \t")

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
        self._before: dict[str, int] = {}  # rows of the context put before a render

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
            out.extend(self._code_rows("x")[:1])  # the code block's top padding
            self.gap = False

    def live(self) -> list[Line]:
        """The open part as it would render now (it may still change)."""
        if self.fence is not None:
            code = self.code + [self.fence.content(self.tail)] if self.tail else self.code
            return self._code_rows("".join(code).rstrip())
        return self._render(self.tail) if self.tail.strip() else []

    def close(self) -> list[Line]:
        """The end of the text: the rest, rendered for good."""
        if self.fence is not None and self.tail and self.fence.closes(self.tail):
            # the text ends on the closing fence, with no newline after it: it closes all
            # the same (settle reads whole lines only)
            self.tail += "\n"
            return self.settle() + self.close()
        if self.fence is not None:
            lines = self.live() + self._code_rows("x")[-1:]  # and the bottom padding
        else:
            lines = self.live()
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
        self.fence = _Fence(marker[0], len(marker), len(match.group(1)), lexer)
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
            out.extend(self._code_rows("x")[-1:])
            self.fence, self.gap = None, True
            return True
        last = max((i for i, line in enumerate(self.code) if line.strip()), default=0)
        if last > 0:
            out.extend(self._code_rows("".join(self.code[:last])[:-1]))  # one row a line
            self.code = self.code[last:]
        return False

    def _code_rows(self, code: str) -> list[Line]:
        """Code as Rich's Markdown shows it; "x" gives the rows of padding above and below."""
        assert self.fence is not None
        shown = visible(visible(code), marked=True)
        padding = 1 if code == "x" else (0, 1)
        syntax = Syntax(shown, self.fence.lexer, theme=CODE_THEME, word_wrap=True, padding=padding)
        rows = self._lines(syntax)
        return [rows[0], rows[-1]] if code == "x" else rows

    def _render(self, text: str) -> list[Line]:
        """`text`, whole blocks, as it renders after the blocks settled before it: Rich puts
        a blank line above a block when the element closed before it asks for one, so a
        block that does so (or a rule, which does not) goes first and its rows are cut."""
        before = "x\n\n" if self.gap else "---\n\n"
        if before not in self._before:
            self._before[before] = len(self._lines(ShownMarkdown(before)))
        # marks for controls; links as "text (url)", never a hidden OSC 8 target; HTML,
        # comments and entities as the text they are (see agentcli/ui/markdown.py)
        return self._lines(ShownMarkdown(before + visible(text)))[self._before[before] :]

    def _lines(self, renderable: RenderableType) -> list[Line]:
        options = self.console.options.update(width=self.console.width)
        return [Line(line) for line in self.console.render_lines(renderable, options, pad=False)]


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
