"""`agentcli threads show` as a person reads it: each message, then each call with its
decision, where it ran, the files it changed and the start of its result; last, why the
last run failed, if it did (an empty answer is not kept: model/empty_answers.py)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from agentcli_tools.plurals import counted
from rich.text import Text

from agentcli.session.transcript import DROPPED_NOTE, decision_text, dropped_calls, speaker
from agentcli.ui.outcome_mark import outcome_mark
from agentcli.ui.safe_text import safe_line, styled

if TYPE_CHECKING:
    from agentcli.thread_rows import ThreadRow

SHOW_RESULT_LINES = 8


def draw(console: Any, row: ThreadRow, turns: list[dict[str, Any]]) -> None:
    """The thread's heading, then its turns."""
    console.print(styled((f"thread {row.thread_id} · {row.title} · {row.status}", "bold")))
    on = f" on {row.base_url}" if row.base_url else ""
    console.print(styled((f"{row.model}{on} · {row.workspace} · {row.updated_at}", "dim")))
    for turn in turns:
        if turn["text"] or turn.get("cut_off"):
            console.print()
            style = "bold magenta" if turn["role"] == "summary" else "bold cyan"
            label = (f"{speaker(turn)}: ", style)
            console.print(styled(label, turn["text"], multiline=True))
        for name in dropped_calls(turn):
            console.print(styled((f"  → {name} {DROPPED_NOTE}", "yellow")))
        for call in turn.get("calls", []):
            args = json.dumps(call["args"], ensure_ascii=False)
            console.print(styled((f"  → {call['tool']} {args}", "cyan")))
            console.print(styled((f"    {decision_text(call['decision'])}", "yellow")))
            if call.get("sandbox"):
                console.print(styled((f"    ran in sandbox: {call['sandbox']}", "dim")))
            if changed := call.get("changed_files"):
                files = ", ".join(changed[:10]) + (" ..." if len(changed) > 10 else "")
                console.print(
                    styled((f"    changed {counted(len(changed), 'file')}: {files}", "magenta"))
                )
            for task in call.get("plan") or []:
                show_task(console, task)
            if call.get("plan"):
                continue  # its result is each task's, shown above
            if call["result"] is not None:
                show_result(console, call["result"], call.get("status"))
    if row.last_error:  # the last run failed: what the thread holds has no answer after it
        console.print()
        console.print(styled(("last run failed: ", "red"), row.last_error))


def show_result(console: Any, result: str, status: str | None) -> None:
    """The start of a call's result, its first line led by how the call ended (`✓`, or a
    red `✗` for a failed command or a tool error), the others by `│`."""
    lines = result.removesuffix("\n").split("\n")[:SHOW_RESULT_LINES]
    for number, text in enumerate(lines):
        shown = Text("    ")
        shown.append_text(outcome_mark(status) if number == 0 else Text("│", style="dim"))
        shown.append(" ")
        shown.append_text(safe_line(text, "dim", tabs=True))  # output: tabs are layout
        console.print(shown)


def show_task(console: Any, task: dict[str, Any]) -> None:
    """One task of a plan that ran: what it ran (its deps' results put in), and how it ended."""
    args = json.dumps(task.get("ran_args") or task.get("args"), ensure_ascii=False)
    after = f" (after {', '.join(map(str, task['deps']))})" if task.get("deps") else ""
    console.print(styled((f"    {task['id']}. {task['tool']} {args}{after}", "cyan")))
    style = "green" if task.get("state") == "done" else "yellow"
    why = f": {task['why']}" if task.get("why") else ""
    console.print(styled((f"       {task.get('state')}{why}", style)))
    for path in task.get("changed_files") or []:
        console.print(styled((f"       changed {path}", "magenta")))
