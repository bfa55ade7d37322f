"""A call's arguments edited at a review: in $VISUAL/$EDITOR, or inline on one line
prefilled with the current JSON; a refused edit (not JSON, or arguments the tool refuses) is
kept to be offered again."""

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

from agentcli.decisions import UNCHANGED, Decide, Decision
from agentcli.terminal_text import dumps, dumps_shown
from agentcli.ui.message_input import edit_line, prefills
from agentcli.ui.safe_text import styled

# check(name, edited, original): why the edit cannot run, or review.UNCHANGED when its
# values are the original's (the tool's schema read, defaults applied); None when it can run
Checker = Callable[[str, Any, Any], "str | None"]


def same_json(one: Any, other: Any) -> bool:
    """Whether two parsed JSON values are the same value (true is not 1, 1 is not 1.0)."""
    return json.dumps(one, sort_keys=True) == json.dumps(other, sort_keys=True)


def edit_arguments(
    console: Console, name: str, args: Any, check: Checker, draft: str | None
) -> tuple[Decision | None, str | None]:
    """The edit decision, or None to choose again, with the text to offer at the next `e`.

    The edit starts from `draft` (a refused edit) or the current arguments. A refused edit
    (not JSON, or arguments the tool refuses) is kept: inline, it is offered again at once,
    with the error above it; in $VISUAL/$EDITOR, at the next `e`."""
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR")
    while True:
        text = (
            _edit_in(console, editor, args, draft) if editor else _edit_inline(console, args, draft)
        )
        if text is None:  # the editor failed, or Ctrl-C: no edit, the draft still kept
            return None, draft
        if not text.strip():
            console.print(Text("empty arguments: no edit; choose again", style="yellow"))
            return None, None
        try:
            edited = json.loads(text)
        except (json.JSONDecodeError, RecursionError) as exc:
            problem: str | None = f"not valid JSON ({exc})"
        else:
            problem = check(name, edited, args)  # may convert values to the schema's types
            if problem == UNCHANGED or same_json(edited, args):  # only `a` approves
                console.print(Text("no change: the call is as it was; choose again", "yellow"))
                return None, None
        if not problem:
            return Decide.edit(name, edited), None
        console.print(styled(("edit refused: ", "red"), problem))
        draft = text
        if editor:
            console.print(Text("your edit is kept: e opens it again", style="dim"))
            return None, draft


def _edit_inline(console: Console, args: Any, draft: str | None) -> str | None:
    """The arguments as one line of JSON, prefilled at a terminal; None on Ctrl-C/Ctrl-D."""
    start = draft if draft is not None else dumps_shown(args)
    if not prefills():
        console.print(styled(("current arguments: ", "dim"), start))
    try:
        return edit_line("new arguments as JSON > ", start)
    except (EOFError, KeyboardInterrupt):  # no edit, choose again
        if not prefills():  # a plain input() leaves the line open; prompt_toolkit ends it
            console.print()
        return None


def _edit_in(console: Console, editor: str, args: Any, draft: str | None) -> str | None:
    """The text saved in $VISUAL/$EDITOR, or None after saying why there is none (the
    editor failed or exited non-zero)."""
    # a lone surrogate as its \\udXXX escape: always UTF-8
    current = draft if draft is not None else dumps(args, indent=2) + "\n"
    name = ""
    try:
        with tempfile.NamedTemporaryFile(
            "w+", suffix=".json", delete=False, encoding="utf-8"
        ) as handle:
            name = handle.name
            handle.write(current)
        result = subprocess.run([*shlex.split(editor), name], check=False)
        text = Path(name).read_text(encoding="utf-8")
    except (OSError, ValueError) as exc:  # ValueError: unbalanced quotes, undecodable text
        console.print(styled((f"cannot run editor {editor!r}: ", "red"), str(exc)))
        return None
    finally:
        if name:
            Path(name).unlink(missing_ok=True)
    if result.returncode != 0:
        console.print(Text(f"editor exited with status {result.returncode}: no edit", style="red"))
        return None
    return text
