"""What of a streamed answer may be shown while it may still hold a tool call written as text.

The answer streams to the person token by token, but a call written as text
(agentcli/agent/text_calls/recovery.py) is only known once the answer is complete, and its
markup is then taken out of the answer. So that the person never sees markup that the
saved answer does not hold, `HeldBack` shows text only up to the first place a call could
start, and holds back everything from there:

- from a marker (`<tool_call>`, `[TOOL_CALLS]`, `<|python_tag|>`, `<function=`) to the end
  of the answer; a tail that could be the start of one is held until it is not;
- the whole answer when it starts with `{`, `[` or a code fence (a bare JSON call);
- a line that is, or could become, an offered tool's name followed by a code fence (the
  ChatGLM form), until it is not;
- blanks at the start, and blanks at the end until something follows them (the saved
  answer is stripped around each call it loses).

When the answer is complete, `rest(final)` is what is left to show of the saved text: what
was shown is always a prefix of it (tests/unit/agent/test_text_tool_calls.py checks this
for arbitrary text and token splits), so the person ends up seeing exactly the saved
answer. Each character is looked at a bounded number of times: linear in the answer.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from agentcli.agent.text_calls.formats import MARKERS

_LONGEST = max(len(marker) for marker in MARKERS)
_MARKER = re.compile("|".join(re.escape(m) for m in MARKERS))
_WHOLE = ("{", "[", "`")  # a first character that may begin a bare JSON call
_FENCE = "\n```"
_HEAD = re.compile(re.escape(_FENCE))
_OPENING = re.compile(r"[<\[]")
_SPECIAL = re.compile(r"[<\[\n`{]")  # a marker, a fence, a line (a tool's name) may start
_MARKER_PREFIXES = {marker[:n] for marker in MARKERS for n in range(1, len(marker))}


class HeldBack:
    """Feed it each streamed piece of text; it returns what may be shown now."""

    def __init__(self, offered: Collection[str]) -> None:
        self.heads = {name + _FENCE for name in offered if name}
        self.longest_head = max((len(head) for head in self.heads), default=0)
        self.head_prefixes = {head[:n] for head in self.heads for n in range(1, len(head) + 1)}
        self.shown: list[str] = []
        self.size = 0  # characters shown
        self.pending = ""  # received, not shown, maybe still shown later
        self.line_start = True  # whether `pending` begins a line
        self.started = False  # a character other than a blank has arrived
        self.held = False  # a call may start in `pending`: nothing more is shown

    def feed(self, piece: str) -> str:
        if self.held:
            return ""
        if not self.started:
            piece = piece.lstrip()
            if not piece:
                return ""
            self.started = True
            if piece.startswith(_WHOLE):
                self.held = True
                return ""
        if (
            not self.line_start
            and _SPECIAL.search(piece) is None
            and (not self.pending or _SPECIAL.search(self.pending) is None)
        ):
            # mid-line, and no character a call's start could begin with, neither waiting
            # nor new: only blanks at the end wait (the common case, kept cheap)
            self.pending += piece
            return self._show(len(self.pending.rstrip()))
        scan = max(0, len(self.pending) - _LONGEST)
        self.pending += piece
        starts = []
        if (marker := _MARKER.search(self.pending, scan)) is not None:
            starts.append(marker.start())
        if (head := self._full_head(max(0, scan - 1))) is not None:
            starts.append(head)
        if starts:
            self.held = True
            return self._show(len(self.pending[: min(starts)].rstrip()))
        return self._show(self._cut())

    def _full_head(self, scan: int) -> int | None:
        """Where a line that is exactly an offered tool's name, followed by a code fence,
        starts in `pending` (a fence after `scan`), or None."""
        text = self.pending
        for fence in _HEAD.finditer(text, scan):
            start = text.rfind("\n", max(0, fence.start() - self.longest_head), fence.start())
            if start == -1 and not self.line_start:
                continue
            if text[start + 1 : fence.start()] + _FENCE in self.heads:
                return start + 1
        return None

    def _cut(self) -> int:
        """How much of `pending` can be shown: up to a tail that may begin a marker or a
        tool name's line, and before trailing blanks."""
        text = self.pending
        cut = len(text.rstrip())
        for opening in _OPENING.finditer(text, max(0, len(text) - _LONGEST + 1)):
            if text[opening.start() :] in _MARKER_PREFIXES:
                cut = min(cut, len(text[: opening.start()].rstrip()))
                break
        if self.head_prefixes:
            # the last two line starts within reach of a name's line and its fence
            floor = max(0, len(text) - self.longest_head - 1)
            starts = [i + 1 for i in _newlines_back(text, floor, 2)]
            if self.line_start and len(text) <= self.longest_head:
                starts.append(0)
            for start in starts:
                if text[start:] in self.head_prefixes:
                    cut = min(cut, len(text[:start].rstrip()))
        return cut

    def _show(self, cut: int) -> str:
        out, self.pending = self.pending[:cut], self.pending[cut:]
        if out:
            self.line_start = out.endswith("\n")
            self.shown.append(out)
            self.size += len(out)
        return out

    def rest(self, final: str) -> str:
        """What is left to show once the answer is complete and saved as `final`."""
        shown = "".join(self.shown)
        for saved in (final, final.lstrip()):  # blanks at its start are never shown
            if saved.startswith(shown):
                return saved[len(shown) :]
        return "\n" + final  # cannot happen (see the module docstring): show all of it


def _newlines_back(text: str, floor: int, count: int) -> list[int]:
    """The positions of up to `count` last newlines of `text` at or after `floor`."""
    found: list[int] = []
    end = len(text)
    while len(found) < count:
        at = text.rfind("\n", floor, end)
        if at == -1:
            break
        found.append(at)
        end = at
    return found
