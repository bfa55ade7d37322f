"""The lines of a fenced code block as screen rows, in time linear in the lines.

Rich's Syntax with `word_wrap` (what rich.markdown draws a code block with) lays each line out
as a paragraph of its own: about 1.5 ms a line, most of the time a long answer's code took
on screen. Here the lines are lexed once (pygments, the lexer and theme Rich uses, so the
colours are the same) and each becomes its row of segments directly.

A code line is never cut into rows with newlines between them: a copy from the terminal
would then hold newlines the code does not have (a broken string, a broken command). A row
longer than the screen is written whole and the terminal wraps it softly, as it does a
long line of `cat`: the copy is the line. Its background is padded to a whole number of
screen widths, so the block stays a block. Only the live part of the screen, which is
redrawn and never copied for good, cuts such a row (`fit`): a redraw must know how many
rows it takes.

The text has been through visible() already (controls are marks); tabs are expanded to
Rich's four columns, as its code blocks do, so no raw tab reaches the terminal.
"""

from __future__ import annotations

from pygments.lexer import Lexer
from pygments.token import _TokenType
from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from rich.syntax import Syntax

CODE_THEME = "monokai"  # rich.markdown.Markdown's default, which ShownMarkdown keeps
TAB_SIZE = 4  # rich.syntax.Syntax's


class CodeRows:
    """Rows of code in one lexer's colours: `rows(lines, width)`, `padding(width)`."""

    def __init__(self, lexer_name: str, theme: str = CODE_THEME) -> None:
        syntax = Syntax("", lexer_name, theme=theme, tab_size=TAB_SIZE)
        self.lexer: Lexer | None = syntax.lexer  # a property that builds one each time
        self.theme = Syntax.get_theme(theme)
        self.base = self.theme.get_background_style()
        self._styles: dict[_TokenType, Style] = {}

    def padding(self, width: int) -> list[Segment]:
        """The blank row a code block has above and below its lines."""
        return [Segment(" " * width, self.base)]

    def rows(self, lines: list[str], width: int) -> list[list[Segment]]:
        """One row per line (`lines` without their newlines), coloured as one piece of code."""
        if not lines:
            return []
        code = "\n".join(line.expandtabs(TAB_SIZE) for line in lines) + "\n"
        rows: list[list[Segment]] = [[Segment(" ", self.base)]]
        if self.lexer is None:
            tokens: list[tuple[_TokenType, str]] = [(_TokenType(), code)]
        else:
            tokens = list(self.lexer.get_tokens(code))
        for kind, value in tokens:
            style = self._style(kind)
            first = True
            for piece in value.split("\n"):
                if not first:
                    rows.append([Segment(" ", self.base)])
                first = False
                if piece:
                    rows[-1].append(Segment(piece, style))
        del rows[len(lines) :]  # the row after the last newline
        for row in rows:
            used = sum(cell_len(segment.text) for segment in row)
            pad = -used % width if used > width else width - used
            if pad:
                row.append(Segment(" " * pad, self.base))
        return rows

    def _style(self, kind: _TokenType) -> Style:
        style = self._styles.get(kind)
        if style is None:
            style = self._styles[kind] = self.base + self.theme.get_style_for_token(kind)
        return style


def fit(row: list[Segment], width: int) -> list[list[Segment]]:
    """`row` cut into rows of `width` cells at most: for the redrawn live part only. The
    blanks Rich pads a row with (no background) are left out: a terminal that reflows
    its lines when it gets narrower would wrap them, and the part would take more rows
    than its redraw goes back up."""
    while row and not row[-1].control and row[-1].text.endswith(" "):
        last = row[-1]
        if last.style is not None and last.style.bgcolor is not None:
            break
        text = last.text.rstrip(" ")
        row = row[:-1] + ([Segment(text, last.style)] if text else [])
    total = sum(cell_len(segment.text) for segment in row)
    if total <= width:
        return [row]
    cuts = [*range(width, total, width), total]  # divide() gives the part before each cut
    return [list(piece) for piece in Segment.divide(row, cuts)]
