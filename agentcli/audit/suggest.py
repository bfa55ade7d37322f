"""Rules for the calls a person keeps approving by hand (`agentcli audit suggest`).

Each call a person approved proposes the rule `A` would offer for it (policy/call_scope.py:
for the shell, the command's first words and a `*`; for file tools, the folder; for URLs, the
host; never a rule that lets an interpreter, a shell or a runner run anything). A proposed
rule is counted the way the policy would match it: every call it fits that a person approved,
in the call's own workspace. It is suggested when it fits at least `min_count` of them and no
call a person rejected, edited or answered with feedback. A rule that fits only calls another
suggestion fits too is left out (`git status *` beside `git status*`). Tools with nothing to
scope a rule by get none: a rule for them would allow every call. Each decision counts once:
the copies a fork or an undo made of it (the same record in another thread) do not.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentcli.audit.log import Entry
from agentcli.policy.call_scope import fits, proposed_match

PERSON = ("person", "client")
UNWANTED = ("rejected", "edited", "feedback")


@dataclass
class Suggestion:
    tool: str
    match: str
    count: int
    example: Any

    def toml(self) -> str:
        return (
            f"[[approval.rules]]\ntool = {json.dumps(self.tool)}\n"
            f'match = {json.dumps(self.match)}\ndecision = "allow"\n'
        )


@dataclass(frozen=True)
class _Call:
    """Distinct calls (tool, workspace, arguments), each fitted once per proposed rule."""

    tool: str
    workspace: str
    args: str  # canonical JSON

    @property
    def arguments(self) -> Any:
        return json.loads(self.args)


def suggestions(found: Iterable[Entry], min_count: int = 3) -> list[Suggestion]:
    """The rules to suggest, most approved first."""
    approved: dict[_Call, int] = {}
    unwanted: set[_Call] = set()
    seen: set[tuple[Any, ...]] = set()
    for entry in found:
        if entry.who not in PERSON or not isinstance(entry.args, Mapping):
            continue
        if entry.decision_id in seen:  # a fork's copy of a decision counted already
            continue
        seen.add(entry.decision_id)
        call = _Call(entry.tool, entry.workspace, json.dumps(entry.args, sort_keys=True))
        if entry.decision in UNWANTED:
            unwanted.add(call)
        elif entry.decision == "approved":
            approved[call] = approved.get(call, 0) + 1
    proposals = {
        (call.tool, match)
        for call in approved
        if (match := proposed_match(call.tool, call.arguments, _path(call))) is not None
    }
    kept: list[tuple[Suggestion, frozenset[_Call]]] = []
    for tool, match in proposals:
        if any(_fits(tool, match, call) for call in unwanted):
            continue
        fitted = frozenset(call for call in approved if _fits(tool, match, call))
        count = sum(approved[call] for call in fitted)
        if count >= min_count:
            example = max(fitted, key=lambda call: approved[call]).arguments
            kept.append((Suggestion(tool, match, count, example), fitted))
    broadest = [s for s, calls in kept if not any(calls < other for _, other in kept)]
    return sorted(broadest, key=lambda s: (-s.count, s.tool, s.match))


def _path(call: _Call) -> Path | None:
    return Path(call.workspace) if call.workspace else None


def _fits(tool: str, match: str, call: _Call) -> bool:
    return fits(tool, match, call.tool, call.arguments, _path(call))
