"""Turns session events into terminal output. Answer text goes to `out`; activity to `info`."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from agentcli_tools.plurals import counted, plural
from rich.console import Console
from rich.text import Text

from agentcli.events import (
    PLAN,
    PLAN_RESULTS,
    AnswerCutOff,
    AssistantMessage,
    CallProgress,
    Compacted,
    Done,
    Event,
    HookNote,
    Retry,
    ReviewRequest,
    RunStatus,
    TextDelta,
    ToolOutput,
    ToolResult,
    why_cut_off,
)
from agentcli.terminal_text import visible
from agentcli.ui.outcome_mark import outcome_mark, outcome_style
from agentcli.ui.safe_text import safe_line, styled

if TYPE_CHECKING:
    from agentcli.ui.live_answer import LiveView

FOLD_LINES = 4
# an error result is a message to read, shown whole; these only bound what a tool can print
ERROR_LINES = 40
ERROR_LINE_CHARS = 4000
# the notes a result may end with, in their order: the sandbox's (tools/sandbox.py denied())
# and agentcli's (agent/tools_node.py); never folded away
NOTES = ("[sandbox] this command ran confined (", "[agentcli: not undoable: ")


KEPT_RESULTS = 200  # the latest results /show can show whole


class Renderer:
    """Plain streaming by default; at a colour terminal, Markdown and a status line.
    `keep`: the chat's renderer: each result is numbered and kept, so that the fold of a
    long one can say how to see it whole (`/show N`)."""

    def __init__(self, out: Console, info: Console | None = None, keep: bool = False) -> None:
        self.out = out
        self.info = info or out
        self._mid_line = False
        self.keep = keep
        self.results: dict[int, ToolResult] = {}  # by number, the latest KEPT_RESULTS
        self.numbered = 0  # results numbered so far
        # chat: a call's `→ tool {args}` line waits until it runs (or a policy decides it):
        # a call a person reviews is shown by its panel, not said twice
        self.defer_calls = False
        self._calls: list[dict] = []
        self.live: LiveView | None = None
        self.debug = os.environ.get("AGENTCLI_DEBUG") == "1"  # --debug (set by the CLI)
        if out.is_terminal and not out.no_color and info is None:
            from agentcli.ui.live_answer import LiveView  # rich.markdown: only for a terminal

            self.live = LiveView(out)

    def begin(self, label: str) -> None:
        """A run starts: show what it waits for, with the time it has taken."""
        if self.live:
            self.live.begin(label)

    def end(self) -> None:
        if self.live:
            self.live.end()
        self.end_line()

    def show(self, event: Event) -> None:
        if isinstance(event, TextDelta):
            if self.live:
                self.live.add_text(event.text)
                return
            shown = visible(event.text)
            self.out.print(shown, end="", markup=False, highlight=False, soft_wrap=True)
            self._mid_line = not event.text.endswith("\n")
        elif isinstance(event, CallProgress):
            if self.live:
                self.live.progress(event.index, progress_label(event))
        elif isinstance(event, AssistantMessage):
            self.end_line()
            if self.live:
                self.live.finish_text()
            self.say_calls()  # any left from before (never dropped unsaid)
            self._calls = list(event.tool_calls)
            if not self.defer_calls:
                self.say_calls()
            if self.live and event.tool_calls:
                names = ", ".join(c["name"] for c in event.tool_calls)
                self.live.begin("running " + names)  # the status line makes it safe
        elif isinstance(event, ToolResult):
            self.end_line()
            self.say_calls()
            self.info.print(fold(event, self._number(event)))
            if self.live:
                self.live.begin("thinking")
        elif isinstance(event, ToolOutput):
            if self._calls:
                self.end_line()
                self.say_calls()
            if self.live:
                self.live.tool_output(event.text)
        elif isinstance(event, Retry):
            self.end_line()
            change = event.change or "trying again"
            note = f"{event.error}; {change} (attempt {event.attempt} of {event.attempts})"
            self.info.print(safe_line(note, "dim"))
            if event.detail and self.debug:  # the whole text the line only names
                self.info.print(styled((event.detail, "dim"), multiline=True))
        elif isinstance(event, HookNote):
            self.end_line()
            self.info.print(styled(("hook: ", "yellow"), (event.text, "yellow"), multiline=True))
        elif isinstance(event, AnswerCutOff):
            self.end_line()
            self.info.print(safe_line(cut_off_note(event), "yellow"))
        elif isinstance(event, Compacted):
            self.end_line()
            self.info.print(Text(compacted_line(event), style="dim"))
        elif isinstance(event, ReviewRequest | Done):
            self.end()
            if isinstance(event, Done) and event.status != RunStatus.AWAITING_APPROVAL:
                self.say_calls()  # those waiting are said by the chat, or by their panel

    def say_calls(self, shown: Callable[[dict], bool] = lambda call: False) -> None:
        """The `→ tool {args}` lines of the calls not said yet, but those `shown` (a review
        panel showed them)."""
        calls = [call for call in self._calls if not shown(call)]
        self._calls = []
        for call in calls:
            args = json.dumps(call["args"], ensure_ascii=False)
            arrow = Text("→ ", style="cyan")
            arrow.append_text(safe_line(call["name"], "cyan"))
            arrow.append_text(safe_line(" " + _clip(args, 100), "cyan"))
            self.info.print(arrow)

    def _number(self, result: ToolResult) -> int | None:
        """The result's number for /show (None when results are not kept)."""
        if not self.keep:
            return None
        self.numbered += 1
        self.results[self.numbered] = result
        self.results.pop(self.numbered - KEPT_RESULTS, None)
        return self.numbered

    def end_line(self) -> None:
        if self._mid_line:
            self.out.print()
            self._mid_line = False


def progress_label(event: CallProgress) -> str:
    """`writing write_file big.txt (12,345 bytes)`: the model's words, clipped to a line;
    the status line shows them as untrusted text (controls as marks)."""
    which = f" (call {event.index + 1})" if event.index else ""
    target = f" {_clip(event.target, 60)}" if event.target else ""
    name = _clip(event.name, 40) or "a tool call"
    return f"writing {name}{target}{which}: {event.bytes:,} bytes"


def cut_off_note(event: AnswerCutOff) -> str:
    """The one-line warning for an answer the server cut off."""
    note = f"warning: the answer was cut off: {why_cut_off(event.reason)}"
    if event.dropped_calls:
        calls = plural("call", len(event.dropped_calls))
        note += f"; its cut-off {calls} did not run: {', '.join(event.dropped_calls)}"
    return note


def compacted_line(event: Compacted) -> str:
    """`context compacted: 40 older messages summarised (~7,100 → ~1,900 tokens)`."""
    why = {"overflow": " (the server refused the request as too long)"}.get(event.reason, "")
    sizes = ""
    if event.tokens_before and event.tokens_after:
        sizes = f" (~{event.tokens_before:,} → ~{event.tokens_after:,} tokens)"
    return f"context compacted: {event.upto} older messages summarised{sizes}{why}"


def fold(result: ToolResult, number: int | None = None) -> Text:
    """A tool result folded to a few lines, with its full length. An error's lines are
    shown whole (wrapped, not cut): its reason and the setting it names are the point; only
    a size limit bounds what a tool can print there (ERROR_LINES of ERROR_LINE_CHARS). The
    notes at its end (the sandbox's, agentcli's) are shown whole below the fold, always.
    `number`: the result's number in the chat, which `/show N` shows whole: a fold that
    leaves lines out, or cuts one, says so."""
    lines = result.content.removesuffix("\n").split("\n")  # not splitlines: \r is shown
    body, notes = _notes(lines)
    if result.name == PLAN and body and body[0].startswith(PLAN_RESULTS):  # tasks shown
        body = [line for line in body if line.startswith((PLAN_RESULTS, "Task "))]
    failed = result.status == "error"
    style = outcome_style(result.status)
    shown_lines, width = (ERROR_LINES, ERROR_LINE_CHARS) if failed else (FOLD_LINES, 160)
    text = outcome_mark(result.status)
    text.append(" ")
    text.append_text(safe_line(result.name, style))
    size = f"{counted(len(lines), 'line')}, {counted(len(result.content), 'char')}"
    text.append(f" ({size})\n", style="dim")
    for row, shown in enumerate(body[:shown_lines]):
        text.append("\n  " if row else "  ", style="dim")
        text.append_text(safe_line(_clip(shown, width), "dim", tabs=True))  # output: layout
    more = len(body) - shown_lines
    whole = f"/show {number} shows it whole" if number is not None else ""
    if more > 0:
        told = f"… {counted(more, 'more line')}" + (f": {whole}" if whole else "")
        text.append(f"\n  {told}", style="dim italic")
    elif whole and any(len(shown) > width for shown in body):
        text.append(f"\n  … {whole}", style="dim italic")
    for note in notes:
        text.append("\n  " if body else "  ")
        text.append_text(safe_line(_clip(note, ERROR_LINE_CHARS), "yellow"))
    return text


def _notes(lines: list[str]) -> tuple[list[str], list[str]]:
    """The result's lines, and the notes after them: the sandbox's on a confined command
    that failed, then agentcli's when the call cannot be undone (each appended last)."""
    end = len(lines)
    for prefix in reversed(NOTES):  # agentcli's is last, the sandbox's before it
        if end > 0 and lines[end - 1].startswith(prefix):
            end -= 1
    return lines[:end], lines[end:]


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
