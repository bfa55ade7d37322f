"""The terminal review: show each pending call, ask a/e/f/r/A/q, edit arguments in $EDITOR."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from agentcli.events import ReviewRequest
from agentcli.preview import preview
from agentcli.review import UNCHANGED
from agentcli.ui.render import call_panel
from agentcli.ui.safe import styled
from agentcli.visible import dumps

ALWAYS = " (always, for this thread)"
CHOICES = "[a]pprove  [e]dit  [f]eedback  [r]eject  [A]lways  [q]uit"
# a call cut off by a crash may have run: it can be marked done instead of run again
RERUN_CHOICES = "[a]pprove again  [e]dit  [d]one  [f]eedback  [r]eject  [q]uit"
# check(name, edited, original): why the edit cannot run, or review.UNCHANGED when its
# values are the original's (the tool's schema read, defaults applied); None when it can run
Checker = Callable[[str, Any, Any], "str | None"]
NO_EDIT = object()  # _edit's answer when there is nothing to decide on


def ask_decisions(
    console: Console, review: ReviewRequest, check: Checker, workspace: Path | None
) -> list[dict[str, Any]] | None:
    """One decision per pending call, in order; None if the person chose to quit.

    File writes and edits show a diff against the file in `workspace`; with no workspace
    (a remote session: the files are on the server) they show their arguments.
    """
    decisions: list[dict[str, Any]] = []
    always: set[str] = set()
    total = len(review.action_requests)
    for index, request in enumerate(review.action_requests, 1):
        name, args = request["name"], request["args"]
        if name in always:
            console.print(styled(("approved ", "green"), (name, "green"), (ALWAYS, "green")))
            decisions.append({"type": "approve"})
            continue
        shown = preview(name, args, workspace)
        console.print(call_panel(name, shown, index, total, request.get("description", "")))
        decision = _ask_one(console, name, args, check, rerun=bool(request.get("rerun")))
        if decision is None:
            return None
        if decision.get("always"):
            always.add(name)
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


def _ask_one(
    console: Console, name: str, args: Any, check: Checker, rerun: bool = False
) -> dict[str, Any] | None:
    choices = RERUN_CHOICES if rerun else CHOICES
    while True:
        try:
            choice = console.input(Text(f"{choices} > ", style="bold")).strip()
        except (EOFError, KeyboardInterrupt):  # Ctrl-C at a review is q
            return None
        if choice == "d" and rerun:
            return {"type": "done"}
        if choice == "A" and rerun:  # no "always" for a call that may run a second time
            console.print(Text("not for a call that may have run: choose again", style="yellow"))
            continue
        if choice == "a":
            return {"type": "approve"}
        if choice == "A":
            return {"type": "approve", "always": True}
        if choice == "q":
            return None
        if choice == "r":
            return {"type": "reject"}
        if choice == "f":
            try:
                text = console.input("feedback for the model > ").strip()
            except (EOFError, KeyboardInterrupt):
                return None
            if text:
                return {"type": "reject", "message": text}
            console.print(Text("empty feedback: choose again", style="yellow"))
        elif choice == "e":
            edited = _edit(console, args)
            if edited is NO_EDIT:
                continue
            problem = check(name, edited, args)  # may convert values to the schema's types
            if problem == UNCHANGED or same_json(edited, args):  # only `a` approves
                console.print(Text("no change: the call is as it was; choose again", "yellow"))
                continue
            if problem:
                console.print(styled(("edit refused: ", "red"), problem))
                continue
            return {"type": "edit", "edited_action": {"name": name, "args": edited}}
        else:
            console.print(Text(f"unknown choice {choice!r}", style="yellow"))


def same_json(one: Any, other: Any) -> bool:
    """Whether two parsed JSON values are the same value (true is not 1, 1 is not 1.0)."""
    return json.dumps(one, sort_keys=True) == json.dumps(other, sort_keys=True)


def _edit(console: Console, args: Any) -> Any:
    """The new arguments from $VISUAL/$EDITOR (or typed inline), or NO_EDIT after saying why:
    the editor failed or exited non-zero, the text is empty, or it is not JSON."""
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR")
    current = dumps(args, indent=2)  # a lone surrogate as its \\udXXX escape: always UTF-8
    if editor:
        name = ""
        try:
            with tempfile.NamedTemporaryFile(
                "w+", suffix=".json", delete=False, encoding="utf-8"
            ) as handle:
                name = handle.name
                handle.write(current + "\n")
            result = subprocess.run([*shlex.split(editor), name], check=False)
            text = Path(name).read_text(encoding="utf-8")
        except (OSError, ValueError) as exc:  # ValueError: unbalanced quotes, undecodable text
            console.print(styled((f"cannot run editor {editor!r}: ", "red"), str(exc)))
            return NO_EDIT
        finally:
            if name:
                Path(name).unlink(missing_ok=True)
        if result.returncode != 0:
            console.print(
                Text(f"editor exited with status {result.returncode}: no edit", style="red")
            )
            return NO_EDIT
    else:
        console.print(styled(("current arguments: ", "dim"), dumps(args)))
        try:
            text = console.input("new arguments as JSON > ")
        except (EOFError, KeyboardInterrupt):  # Ctrl-C: no edit, choose again
            return NO_EDIT
    if not text.strip():
        console.print(Text("empty arguments: no edit; choose again", style="yellow"))
        return NO_EDIT
    try:
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        console.print(styled(("edit refused: ", "red"), f"not valid JSON ({exc})"))
        return NO_EDIT
