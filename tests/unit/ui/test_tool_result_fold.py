"""A tool result in chat: folded to a few lines, its closing notes always shown whole."""

from __future__ import annotations

import pytest

from agentcli.events import ToolResult
from agentcli.ui.event_renderer import FOLD_LINES, fold

SANDBOX = "[sandbox] this command ran confined (workspace-write): it may write only in /w" + (
    " and more" * 30
)
UNDO = "[agentcli: not undoable: git add failed: fatal: adding files failed]"
OUTPUT = "exit code 1\n" + "\n".join(f"line {n}" for n in range(20))


@pytest.mark.parametrize(
    ("notes", "status"),
    [([SANDBOX], "success"), ([UNDO], "success"), ([SANDBOX, UNDO], "success"), ([UNDO], "error")],
)
def test_the_notes_at_the_end_are_shown_below_the_fold(notes: list[str], status: str) -> None:
    content = "\n".join([OUTPUT, *notes]) + "\n"
    shown = fold(ToolResult("c1", "shell", content, status)).plain.split("\n")
    assert [line.strip() for line in shown[-len(notes) :]] == notes  # whole: not clipped
    if status == "success":
        assert shown[FOLD_LINES + 1].strip() == f"… {21 - FOLD_LINES} more lines"


def test_a_note_like_line_inside_the_output_stays_folded() -> None:
    content = f"exit code 0\n{SANDBOX}\n" + "\n".join(f"line {n}" for n in range(20))
    shown = fold(ToolResult("c1", "shell", content)).plain
    assert shown.count("[sandbox]") == 1 and shown.rstrip().endswith("more lines")
    early = fold(ToolResult("c1", "shell", f"{UNDO}\n{SANDBOX}\nend")).plain
    assert early.rstrip().endswith("end")  # notes come last, in that order, or not at all


def test_a_result_without_notes_folds_as_before() -> None:
    shown = fold(ToolResult("c1", "shell", OUTPUT)).plain.split("\n")
    assert len(shown) == 1 + FOLD_LINES + 1 and shown[-1].strip().startswith("…")
