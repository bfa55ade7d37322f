"""The review as an editor asks it: the four choices of `session/request_permission` for one
call, and the decision each choice is.

The choices are agentcli's, fixed: their ids are constants and their names agentcli's words;
the only text of the model's in them is the match of the `allow always` rule, quoted as JSON
(ASCII, controls escaped) and clipped. A choice the editor returns is taken only if it is
one of those offered for that call; anything else (cancelled, an unknown id, no answer)
decides nothing, and the call waits as after `q` at a terminal.

Allow always is the rule `A` offers at a terminal (session/always_rules.py): scoped to the
call's main argument, kept for the thread by the graph, which seals it. Reject always is
this editor session's: later calls of the same scope are rejected without asking, until
the session ends.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp.schema import PermissionOption

from agentcli.decisions import Decide, Decision
from agentcli.session.always_rules import allows, proposal

ALLOW_ONCE, ALLOW_ALWAYS = "allow_once", "allow_always"
REJECT_ONCE, REJECT_ALWAYS = "reject_once", "reject_always"
MATCH_SHOWN = 80  # characters of a rule's match in a choice's name


@dataclass
class Question:
    """One call asked about: the choices offered, and the rule `allow always` would keep."""

    request: dict[str, Any]
    match: str | None  # None: the whole tool
    options: list[PermissionOption]


def question(request: dict[str, Any], workspace: Path | None) -> Question:
    name, args = str(request["name"]), request.get("args")
    match = proposal(name, args, workspace)
    scope = _scope(name, match)
    options = [PermissionOption(option_id=ALLOW_ONCE, name="Allow once", kind="allow_once")]
    if not request.get("rerun"):  # a call that may have run already: never "always"
        options.append(
            PermissionOption(
                option_id=ALLOW_ALWAYS,
                name=f"Allow always in this thread: {scope}",
                kind="allow_always",
            )
        )
    options.append(PermissionOption(option_id=REJECT_ONCE, name="Reject", kind="reject_once"))
    options.append(
        PermissionOption(
            option_id=REJECT_ALWAYS,
            name=f"Reject always in this editor session: {scope}",
            kind="reject_always",
        )
    )
    return Question(request, match, options)


def _scope(name: str, match: str | None) -> str:
    """The rule's scope as a choice names it: `shell "git status*"`, or the whole tool."""
    if match is None:
        return f"every {json.dumps(name)} call"
    quoted = json.dumps(match)  # ASCII: no control, no bidi override, no newline
    if len(quoted) > MATCH_SHOWN:
        quoted = quoted[: MATCH_SHOWN - 4] + '..."'
    return f"{json.dumps(name)} calls matching {quoted}"


@dataclass
class Choices:
    """What an editor session remembers between reviews: the scopes rejected always."""

    by: str  # who decided, in the audit: "acp: <the editor's name>"
    rejected: list[tuple[str, str | None]] = field(default_factory=list)

    def decision(self, asked: Question, chosen: str | None) -> Decision | None:
        """The decision for the option `chosen`; None if it was not one offered."""
        if chosen not in {option.option_id for option in asked.options}:
            return None
        if chosen == ALLOW_ONCE:
            return self._signed(Decide.approve())
        if chosen == ALLOW_ALWAYS:
            return self._signed(Decide.approve(always=True, match=asked.match))
        if chosen == REJECT_ALWAYS:
            self.rejected.append((str(asked.request["name"]), asked.match))
        return self._signed(Decide.reject())

    def already(
        self, request: dict[str, Any], allowed: list[tuple[str, str | None]], workspace: Path | None
    ) -> Decision | None:
        """A decision without asking: the call fits a scope rejected always in this session,
        or one allowed always earlier in the same review (the graph keeps that rule, and
        decides the calls of later turns by it itself)."""
        name, args = str(request["name"]), request.get("args")
        if request.get("rerun") or not isinstance(args, dict):
            return None
        if any(allows(tool, match, name, args, workspace) for tool, match in self.rejected):
            return self._signed(Decide.reject())
        if any(allows(tool, match, name, args, workspace) for tool, match in allowed):
            return self._signed(Decide.approve())
        return None

    def _signed(self, decision: Decision) -> Decision:
        decision["who"], decision["by"] = "client", self.by
        return decision
