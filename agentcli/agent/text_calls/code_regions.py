"""Where the code is in a Markdown answer: fenced blocks, and inline spans between backticks.

Text inside them is an example, not something the model did: the text tool-call readers
(agentcli/agent/text_calls/formats.py) skip markers found there.
"""

from __future__ import annotations

FENCE = "```"


def code_regions(text: str) -> list[tuple[int, int]]:
    """Fenced code blocks (``` lines; an unclosed one runs to the end), in one pass."""
    regions: list[tuple[int, int]] = []
    opened: int | None = None
    position = 0
    for line in text.splitlines(keepends=True):
        if line.lstrip(" ").startswith(FENCE):
            if opened is None:
                opened = position
            else:
                regions.append((opened, position + len(line)))
                opened = None
        position += len(line)
    if opened is not None:
        regions.append((opened, len(text)))
    return regions


class CodeTest:
    """Whether positions, asked in increasing order, lie in code (fenced or inline): linear
    over all the questions together."""

    def __init__(self, text: str, regions: list[tuple[int, int]]) -> None:
        self.text, self.regions, self.region = text, regions, 0
        self.at, self.line_start, self.ticks = 0, 0, 0

    def __call__(self, position: int) -> bool:
        while self.region < len(self.regions) and self.regions[self.region][1] <= position:
            self.region += 1
        if self.region < len(self.regions) and self.regions[self.region][0] <= position:
            return True
        newline = self.text.rfind("\n", self.at, position)
        if newline != -1:  # an inline span does not go past its line
            self.line_start, self.ticks = newline + 1, 0
        self.ticks += self.text.count("`", max(self.at, self.line_start), position)
        self.at = position
        return self.ticks % 2 == 1
