"""Plain aligned columns for listings (`threads list`, `tools`): greppable, and fast to
print because they need no Rich."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Sequence

from agentcli.terminal_text import line


def columns(headers: Sequence[str] | None, rows: Sequence[Sequence[str]], flex: int) -> str:
    """The rows as left-aligned columns two spaces apart, headers first if given.

    At a terminal the `flex` column is cut with an ellipsis so each line fits the width;
    piped, nothing is cut (the full text is what a script wants).
    """
    table = [list(headers)] if headers else []
    table += [[" ".join(line(cell).split()) for cell in row] for row in rows]  # marks, 1 line
    widths = [max(len(line[i]) for line in table) for i in range(len(table[0]))]
    if sys.stdout.isatty():
        room = (
            shutil.get_terminal_size().columns
            - (sum(widths) - widths[flex])
            - 2 * (len(widths) - 1)
        )
        widths[flex] = max(min(widths[flex], room), 10)
    lines = []
    for row in table:
        cells = [_fit(cell, width) for cell, width in zip(row, widths, strict=True)]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def _fit(cell: str, width: int) -> str:
    return cell.ljust(width) if len(cell) <= width else cell[: width - 1] + "…"
