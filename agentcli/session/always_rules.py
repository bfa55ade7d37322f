"""The approve-always rules a review offers (`A`), as the policy will read them: the match
proposed for a call, whether a rule fits a call, how many of the thread's earlier calls it
would have let through, why it would let everything through, and whether the call it was
made for passes as the rule's own example."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from agentcli.policy.allow_all import allows_everything
from agentcli.policy.call_scope import fits, proposed_match
from agentcli.policy.rule_examples import example_problems


def proposal(tool: str, args: Any, workspace: Path | None) -> str | None:
    """The match `A` offers for this call; None: the whole tool (nothing in it to scope)."""
    return proposed_match(tool, args, workspace) if isinstance(args, dict) else None


def allows(
    tool: str, match: str | None, call_tool: str, args: Mapping[str, Any], workspace: Path | None
) -> bool:
    """Whether an allow rule for `tool` with `match` (None: the whole tool) allows the call."""
    return fits(tool, match, call_tool, args, workspace)


def earlier_hits(
    tool: str, match: str, audit: Sequence[Mapping[str, Any]], workspace: Path | None
) -> tuple[int, int]:
    """Of the thread's earlier decided calls of `tool` (its audit), how many the rule
    allows, and how many there were."""
    earlier = [r for r in audit if r.get("tool") == tool and isinstance(r.get("args"), dict)]
    return sum(fits(tool, match, tool, r["args"], workspace) for r in earlier), len(earlier)


def too_wide(tool: str, match: str) -> str | None:
    """Why an allow rule for `tool` with `match` amounts to allowing everything, or None."""
    return allows_everything(tool, match, "allow")


def passes_as_example(tool: str, match: str, example: str) -> bool:
    """Whether the rule matches `example` (the call it was made for) as the config's
    `should_match` would check it."""
    rule = {"tool": tool, "match": match, "decision": "allow", "should_match": [example]}
    return not example_problems(rule)
