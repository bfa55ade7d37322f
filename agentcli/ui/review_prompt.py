"""The terminal review: show each pending call, ask a/e/f/r/A/v/q (one key at a terminal,
review_keys.py), have its arguments edited (argument_edit.py) and show the edited call for
approval, show the whole call in $PAGER."""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from agentcli.decisions import Decide, Decision
from agentcli.events import ReviewRequest
from agentcli.ui.always_rule import AlwaysScope, ask_scope
from agentcli.ui.argument_edit import Checker, edit_arguments, same_json
from agentcli.ui.call_panel import call_panel
from agentcli.ui.call_preview import preview
from agentcli.ui.pager import page
from agentcli.ui.review_keys import QUIT, REDRAW, HeldChoice, read_choice
from agentcli.ui.safe_text import styled

ALWAYS = " (always, for this thread)"
EDITED = " (edited)"
ASKS, BY_DEFAULT = "Tool execution requires approval (", "needs review by default"
CHOICES = "[a]pprove  [e]dit  [f]eedback  [r]eject  [A]lways  [v]iew all  [q]uit"
# a call cut off by a crash may have run: it can be marked done instead of run again
RERUN_CHOICES = "[a]pprove again  [e]dit  [d]one  [f]eedback  [r]eject  [v]iew all  [q]uit"
# a call that would run confined may be run unconfined, this once
UNCONFINED_CHOICES = (
    "[a]pprove  [u]nconfined once  [e]dit  [f]eedback  [r]eject  [A]lways  [v]iew all  [q]uit"
)
# an edited call, shown as it will run: `a` approves it as edited
EDITED_CHOICES = "[a]pprove edited  [e]dit again  [f]eedback  [r]eject  [v]iew all  [q]uit"


def ask_decisions(
    console: Console,
    review: ReviewRequest,
    check: Checker,
    workspace: Path | None,
    scope: AlwaysScope | None = None,
    drawn: Callable[[], None] | None = None,
    held: HeldChoice | None = None,
) -> list[Decision] | None:
    """One decision per pending call, in order; None if the person chose to quit (q, Esc,
    Ctrl-C: the calls stay pending); EOFError on Ctrl-D (the caller leaves).

    File writes and edits show a diff against the file in `workspace`; with no workspace
    (a remote session: the files are on the server) they show their arguments. `A` offers a
    rule scoped to the call (always_rule.py), counted against `scope.audit`. `drawn` is
    called once the first panel is on the screen, before a key is read. `held`: the first
    panel and its choice are on the screen already, drawn by `draw_first` from the same
    call, and its key is read there.
    """
    from agentcli.session.always_rules import allows

    decisions: list[Decision] = []
    always: list[tuple[str, str | None]] = []  # (tool, match or None: the whole tool)
    scope = scope or AlwaysScope()
    total = len(review.action_requests)
    for index, request in enumerate(review.action_requests, 1):
        name, args = request["name"], request["args"]
        if any(allows(tool, match, name, args, workspace) for tool, match in always):
            console.print(styled(("approved ", "green"), (name, "green"), (ALWAYS, "green")))
            decisions.append(Decide.approve())
            continue
        sandbox = request.get("sandbox")
        reason = reason_shown(request.get("description", ""))
        show = partial(_show_call, console, request, workspace, (index, total), reason)
        scoped: list[str | None] = []

        def on_always(name: str = name, args: Any = args, scoped: list = scoped) -> Decision | None:
            asked = ask_scope(console, name, args, workspace, scope)
            if asked is not None:
                scoped.append(asked[1])
            return None if asked is None else asked[0]

        if held is None or index > 1:
            show(args, False)
        if drawn is not None:
            drawn()
            drawn = None
        decision = _ask_one(
            console,
            name,
            args,
            check,
            show,
            rerun=bool(request.get("rerun")),
            lift=bool(sandbox),
            view=partial(page, console, name, workspace=workspace, description=reason),
            on_always=on_always,
            held=held if index == 1 else None,
        )
        if decision is None:
            return None
        if decision.get("always") and scoped and scoped[-1] is not None:
            always.append((name, scoped[-1]))
            console.print(
                styled(
                    ("calls of ", "dim"),
                    (name, "dim"),
                    (" this rule matches are allowed for the rest of this thread", "dim"),
                )
            )
        elif decision.get("always"):
            always.append((name, None))
            console.print(
                styled(
                    (name, "dim"),
                    (" is allowed for the rest of this thread. To allow it everywhere,", "dim"),
                )
            )
            console.print(  # json.dumps: ASCII, controls escaped, quoted for TOML
                Text(f"add to your config:  [approval] allow = [{json.dumps(name)}]", "dim")
            )
        decisions.append(decision)
    return decisions


def _show_call(
    console: Console,
    request: dict[str, Any],
    workspace: Path | None,
    place: tuple[int, int],
    reason: str,
    args: Any,
    edited: bool,
) -> None:
    """The call's panel with `args` (a diff for a file), and what agentcli says of it."""
    name = request["name"]
    shown = preview(name, args, workspace)
    console.print(call_panel(name, shown, *place, reason, EDITED * edited))
    if hook := request.get("hook"):  # the person's hooks' own words: marks, never codes
        console.print(styled(("hooks: ", "yellow"), (str(hook), "yellow"), multiline=True))
    if sandbox := request.get("sandbox"):
        console.print(styled(("runs in the sandbox: ", "dim"), (str(sandbox), "dim")))
    if (limit := request.get("undo")) and not edited:  # said of the call as proposed
        console.print(styled(("cannot be undone: ", "yellow"), (str(limit), "yellow")))


def draw_first(
    console: Console, requests: list[dict[str, Any]], workspace: Path | None
) -> HeldChoice:
    """Draw the first call's panel and its choice as `ask_decisions` draws them, before the
    session that will take the key is made (cli/early_review.py); the choice, held."""
    request = requests[0]
    reason = reason_shown(request.get("description", ""))
    _show_call(console, request, workspace, (1, len(requests)), reason, request["args"], False)
    return HeldChoice(
        console, f"{_choices(bool(request.get('rerun')), bool(request.get('sandbox')))} > "
    )


def _choices(rerun: bool, lift: bool) -> str:
    """The choices of a call as first shown: a rerun's, a confined call's, or the usual."""
    return RERUN_CHOICES if rerun else UNCONFINED_CHOICES if lift else CHOICES


def reason_shown(description: str) -> str:
    """What the panel says under a call: why it asks, when that is more than the default
    (every call asks unless a rule says otherwise: saying so on every panel says nothing)."""
    text = description
    if text.startswith(ASKS) and text.endswith(")"):
        text = text[len(ASKS) : -1]
    return "" if text == BY_DEFAULT else text


def _ask_one(
    console: Console,
    name: str,
    args: Any,
    check: Checker,
    show: Callable[[Any, bool], None],
    view: Callable[[Any], None],
    rerun: bool = False,
    lift: bool = False,
    on_always: Callable[[], Decision | None] | None = None,
    held: HeldChoice | None = None,
) -> Decision | None:
    """The decision for one call shown by `show(args, edited)`; None to quit. An edit is
    shown (a diff for a file) and waits for `a`, as the call first did. `held`: the first
    choice, drawn already (draw_first)."""
    original = args
    edited: Decision | None = None  # the edit shown, approved by `a`
    draft: str | None = None  # a refused edit, kept to be offered again
    while True:
        if edited is not None:
            choices = EDITED_CHOICES
        else:
            choices = _choices(rerun, lift)
        if held is not None:  # EOFError: Ctrl-D, the caller leaves
            choice, held = held.take(), None
        else:
            choice = read_choice(console, f"{choices} > ")
        if choice == REDRAW:
            show(args, edited is not None)
        elif choice == QUIT:
            return None
        elif choice == "a":
            return edited or Decide.approve()
        elif choice == "r":
            return Decide.reject()
        elif choice == "v":
            view(args)
        elif choice == "f":
            if text := _feedback(console):
                return Decide.reject(text)
        elif choice == "e":
            decision, draft = edit_arguments(console, name, args, check, draft)
            if decision is not None:
                args = decision["edited_action"]["args"]
                edited = None if same_json(args, original) else decision
                show(args, edited is not None)
        elif edited is not None and choice in ("A", "u", "d"):
            console.print(Text("not for an edited call: a approves it as edited", "yellow"))
        elif choice == "d" and rerun:
            return Decide.done()
        elif choice == "A" and rerun:  # no "always" for a call that may run a second time
            console.print(Text("not for a call that may have run: choose again", style="yellow"))
        elif choice == "u" and lift and not rerun:  # only offered for a call that runs confined
            return Decide.approve(unconfined=True)
        elif choice == "A":
            if on_always is None:
                return Decide.approve(always=True)
            if (scoped := on_always()) is not None:
                return scoped
        else:
            console.print(Text(f"unknown choice {choice!r}", style="yellow"))


def _feedback(console: Console) -> str:
    """One line for the model; "" (and why) to choose again. EOFError at the input's end."""
    try:
        text = console.input("feedback for the model > ").strip()
    except KeyboardInterrupt:  # no feedback: back to the choice
        console.print()
        return ""
    if not text:
        console.print(Text("empty feedback: choose again", style="yellow"))
    return text
