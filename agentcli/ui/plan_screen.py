"""The terminal review of a plan: the whole plan at once, then one choice for all of it.

Every task is shown with its arguments (whole for the tasks you decide; cut at ARGS_SHOWN
characters for those the policy decides), the tasks it needs and what decides it (you, the
policy, a deny rule). `a` approves every task you were asked about that you did not drop;
`e N` edits task N's arguments (as the review of a single call does); `d N` drops task N,
and says which tasks go with it (those that need it); `k N` keeps a dropped task again;
`f` sends the plan back with feedback (nothing runs, the model plans again); `v` shows
every task whole in $PAGER; `q` leaves the plan waiting. The answer is one decision per
task asked about, in order (agent/plan/plan_review.py reads it). At a terminal each choice
is one key (review_keys.py); `e`, `d` and `k` then ask which task, unless there is one.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from agentcli_tools.plurals import counted
from rich.console import Console
from rich.text import Text

from agentcli.decisions import Decide, Decision
from agentcli.events import ReviewRequest
from agentcli.ui.argument_edit import Checker, edit_arguments
from agentcli.ui.pager import page_calls
from agentcli.ui.review_keys import QUIT, REDRAW, at_terminal, read_choice
from agentcli.ui.safe_text import safe_line, styled

CHOICES = "[a]pprove  [e]dit N  [d]rop N  [k]eep N  [f]eedback  [v]iew all  [q]uit > "
# characters of the arguments of a task the policy decides, on its line (v shows them whole);
# a task you are asked about is shown whole, as the review of a single call is: `a`
# approves nothing you were not shown
ARGS_SHOWN = 160
VERDICTS = {"allowed": ("runs: ", "green"), "denied": ("denied: ", "red"), "ask": ("", "")}


def ask_plan_decisions(
    console: Console, review: ReviewRequest, check: Checker, workspace: Path | None
) -> list[Decision] | None:
    """One decision per task asked about, in order; None if the person chose to quit (q,
    Esc, Ctrl-C: the plan stays pending); EOFError on Ctrl-D (the caller leaves)."""
    tasks = list(review.plan or [])
    asked = {int(r["plan_task"]): r for r in review.action_requests}
    edits: dict[int, Decision] = {}
    dropped: set[int] = set()
    drafts: dict[int, str | None] = {}
    _show(console, tasks, asked, edits, dropped)
    while True:
        choice = read_choice(console, CHOICES)  # EOFError: Ctrl-D, the caller leaves
        if choice == REDRAW:
            _show(console, tasks, asked, edits, dropped)
            continue
        word, _, rest = choice.partition(" ")
        if word == "a":
            return [_decision(task, edits, dropped) for task in asked]
        if word == QUIT:
            return None
        if word == "v":
            shown = [(t["tool"], _args(t, edits), _about(t)) for t in tasks]
            page_calls(console, shown, workspace)
            continue
        if word == "f":
            if said := _feedback(console):
                return [Decide.reject(said) for _ in asked]
            continue
        if word not in ("e", "d", "k"):
            console.print(Text(f"unknown choice {choice!r}", style="yellow"))
            continue
        if not rest.strip() and at_terminal():  # one key: which task, unless only one
            rest = _which_task(console, asked)
        number = _task_number(console, rest, asked, word)
        if number is None:
            continue
        if word == "e":
            task = next(t for t in tasks if t["id"] == number)
            decision, drafts[number] = edit_arguments(
                console, task["tool"], _args(task, edits), check, drafts.get(number)
            )
            if decision is not None:
                edits[number] = decision
        elif word == "d":
            dropped.add(number)
            gone = sorted(_needing(tasks, number) - {number})
            also = f"; with it go {_listed(gone)}, which need it" if gone else ""
            console.print(styled((f"task {number} dropped{also}", "yellow")))
        else:
            dropped.discard(number)
        _show(console, tasks, asked, edits, dropped)


def _decision(number: int, edits: Mapping[int, Decision], dropped: set[int]) -> Decision:
    if number in dropped:
        return Decide.reject()
    return edits.get(number) or Decide.approve()


def _which_task(console: Console, asked: Mapping[int, Any]) -> str:
    """The task a key (e, d, k) is for: the only one asked about, or a number typed ("" on
    Ctrl-C: choose again)."""
    if len(asked) == 1:
        return str(next(iter(asked)))
    try:
        return console.input(f"task ({_listed(sorted(asked))}) > ").strip()
    except KeyboardInterrupt:
        console.print()
        return ""


def _feedback(console: Console) -> str:
    """The feedback typed ("" to choose again, also on Ctrl-C); EOFError at the input's end."""
    try:
        text = console.input("feedback on the plan, for the model > ").strip()
    except KeyboardInterrupt:
        console.print()
        return ""
    if not text:
        console.print(Text("empty feedback: choose again", style="yellow"))
    return text


def _task_number(console: Console, text: str, asked: Mapping[int, Any], word: str) -> int | None:
    """The task a choice names, if it is one you were asked about."""
    try:
        number = int(text.strip())
    except ValueError:
        console.print(Text(f"say which task: {word} N (a task number)", style="yellow"))
        return None
    if number not in asked:
        console.print(
            Text(
                f"task {number} is not yours to decide here (the policy decides it, or there is"
                " none): send feedback to change it",
                style="yellow",
            )
        )
        return None
    return number


def _needing(tasks: Sequence[Mapping[str, Any]], number: int) -> set[int]:
    """Task `number` and every task that needs it, directly or through others."""
    found = {number}
    grew = True
    while grew:
        grew = False
        for task in tasks:
            if task["id"] not in found and set(task.get("deps") or []) & found:
                found.add(task["id"])
                grew = True
    return found


def _show(
    console: Console,
    tasks: Sequence[Mapping[str, Any]],
    asked: Mapping[int, Any],
    edits: Mapping[int, Decision],
    dropped: set[int],
) -> None:
    gone = set().union(*(_needing(tasks, n) for n in dropped)) if dropped else set()
    console.print(Text(f"plan: {counted(len(tasks), 'task')}", style="bold"))
    for task in tasks:
        number = task["id"]
        line = Text(f"{number:>3}  ", style="bold")
        line.append_text(safe_line(task["tool"], "bold"))
        line.append(" ")
        shown = json.dumps(_args(task, edits), ensure_ascii=False)
        line.append_text(safe_line(shown if number in asked else _clip(shown)))
        if task.get("deps"):
            line.append(f"  after {_listed(task['deps'])}", style="dim")
        line.append("  ")
        line.append_text(_state(task, number in asked, number in edits, number in gone))
        console.print(line)


def _state(task: Mapping[str, Any], asked: bool, edited: bool, gone: bool) -> Text:
    if gone:
        return Text("dropped", style="yellow")
    if asked:
        return Text("edited: asks you" if edited else "asks you", style="bold cyan")
    label, style = VERDICTS.get(task.get("verdict", ""), ("", ""))
    return styled((label, style), (str(task.get("reason") or task.get("verdict")), style))


def _args(task: Mapping[str, Any], edits: Mapping[int, Decision]) -> Any:
    edit = edits.get(task["id"])
    return edit["edited_action"]["args"] if edit and "edited_action" in edit else task["args"]


def _about(task: Mapping[str, Any]) -> str:
    after = f", after task {_listed(task['deps'])}" if task.get("deps") else ""
    return f"plan task {task['id']}{after}: {task.get('reason', '')}"


def _listed(numbers: Sequence[int]) -> str:
    return ", ".join(map(str, numbers))


def _clip(text: str) -> str:
    return text if len(text) <= ARGS_SHOWN else text[: ARGS_SHOWN - 1] + "…"
