"""`A` at a review: a rule scoped to the call's main argument (policy/call_scope.py), shown
with how many earlier calls of the thread it would have matched, and a warning when its
match allows everything (policy/allow_all.py: `git *`, `sed *`, an edit to `python *`) before
the person keeps it for this thread or writes it to the config file.

The rule goes to the graph in the decision (`"always": true, "match": ...`): the graph, not
this prompt, keeps it for the thread (sealed) and decides by it what runs without review.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from agentcli.decisions import Decide, Decision
from agentcli.ui.message_input import edit_line, prefills
from agentcli.ui.review_keys import QUIT, REDRAW, read_choice
from agentcli.ui.safe_text import styled

SCOPE_CHOICES = "[t]his thread  [w]rite to the config file too  [e]dit the match  [b]ack > "
THREAD_ONLY = "[t]his thread  [e]dit the match  [b]ack > "


@dataclass
class AlwaysScope:
    """What `A` needs beyond the call: the thread's audit (its earlier decided calls) and the
    config file `w` writes to (None: not offered, as on a LangGraph server, whose rules are
    its own)."""

    audit: Sequence[Mapping[str, Any]] = field(default_factory=list)
    config_path: Path | None = None


def ask_scope(
    console: Console, name: str, args: Any, workspace: Path | None, scope: AlwaysScope
) -> tuple[Decision, str | None] | None:
    """The approve-always decision and its match (None: the whole tool, for a tool whose
    calls have nothing to scope), or None to go back to the choice."""
    from agentcli.session.always_rules import proposal

    match = proposal(name, args, workspace)
    if match is None:
        return Decide.approve(always=True), None
    while True:
        _show(console, name, match, args, workspace, scope)
        choices = SCOPE_CHOICES if scope.config_path is not None else THREAD_ONLY
        choice = read_choice(console, choices)  # EOFError (Ctrl-D): the caller leaves
        if choice == "t":
            return Decide.approve(always=True, match=match), match
        if choice == "w" and scope.config_path is not None:
            if _write(console, scope.config_path, name, match, args):
                return Decide.approve(always=True, match=match), match
        elif choice == "e":
            match = _edit(console, match)
        elif choice in ("b", QUIT):
            return None
        elif choice == REDRAW:  # the loop shows the rule again
            continue
        else:
            console.print(Text(f"unknown choice {choice!r}", style="yellow"))


def _show(
    console: Console,
    name: str,
    match: str,
    args: Any,
    workspace: Path | None,
    scope: AlwaysScope,
) -> None:
    from agentcli.session.always_rules import allows, earlier_hits, too_wide

    hits, earlier = earlier_hits(name, match, scope.audit, workspace)
    console.print(
        styled(
            ("rule: ", "bold"),
            f"tool = {json.dumps(name)}, match = {json.dumps(match, ensure_ascii=False)},",
            ' decision = "allow"',
        )
    )
    console.print(styled((matched_earlier(hits, earlier, name), "dim")))
    if not allows(name, match, name, args, workspace):
        console.print(
            Text("it does not match this call (which is approved this once)", style="yellow")
        )
    if why := too_wide(name, match):  # before `t` or `w` keeps it
        console.print(styled(("warning: ", "bold red"), (why, "red")))


def _edit(console: Console, match: str) -> str:
    if not prefills():
        console.print(styled(("current match: ", "dim"), match))
    try:
        text = edit_line("match > ", match).strip()
    except (EOFError, KeyboardInterrupt):
        if not prefills():
            console.print()
        return match
    if not text:
        console.print(Text("an empty match: kept as it was", style="yellow"))
        return match
    return text


def _write(console: Console, path: Path, name: str, match: str, args: Mapping[str, Any]) -> bool:
    """Append the rule to the config file; False (and why) if it cannot be."""
    from agentcli.config.rule_file import append_rule, rule_table
    from agentcli.errors import AgentcliError
    from agentcli.session.always_rules import passes_as_example

    example = _subject(name, args)
    examples: tuple[str, ...] = ()
    if example is not None and passes_as_example(name, match, example):
        examples = (example,)  # the call it was made for, as the rule's own test
    try:
        append_rule(path, rule_table(name, match, examples=examples))
    except AgentcliError as exc:
        for line in exc.lines:
            console.print(styled(("not written: ", "red"), line))
        return False
    console.print(styled(("written to ", "green"), (str(path), "green")))
    return True


def _subject(name: str, args: Mapping[str, Any]) -> str | None:
    """The call's subject as a rule example spells it (rule_examples.py)."""
    for key in ("command", "url", "path"):
        if isinstance(args.get(key), str):
            return str(args[key]) if name == "shell" or key != "command" else None
    return None


def matched_earlier(hits: int, earlier: int, name: str) -> str:
    """How the rule fares on this thread's earlier calls of the tool, counted."""
    if earlier == 0:
        return f"no earlier {name} call in this thread to try it on"
    if earlier == 1:
        would = "it would have matched" if hits else "it would not have matched"
        return f"{would} the one earlier {name} call in this thread"
    return f"it would have matched {hits} of the {earlier} earlier {name} calls in this thread"
