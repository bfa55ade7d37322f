"""Why the policy decides what it does: for `agentcli policy check` and `policy list`.

`explain` gives the verdict on one call with the rule, flag or list that decided and where
it came from, and, for the shell, every command the bash parser found in the line (behind
`bash -c`, `sudo`, in `$(...)`, each part of a chain) with the verdict each would get alone.
A word that is not literal is shown as `<?>` and decided as a shell variable would be. The
verdict on the whole line is the one that counts: an allowed part does not allow the line.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from agentcli.policy.allow_all import allows_everything
from agentcli.policy.approval_policy import Policy, Verdict

RULE_NUMBER = re.compile(r"rule (\d+) \(")
HOLE = "$x"  # how a word that is not literal is decided: a variable's value, unknown


def origin(by: str, sources: Mapping[str, str]) -> str:
    """Where what decided comes from: a config file, a flag, the thread, or the default."""
    if by.startswith("flag"):
        return by.removeprefix("flag ")
    if by.startswith("config approval."):
        return sources.get(by.removeprefix("config "), "config")
    if by.startswith("rule"):
        return sources.get("approval.rules", "config")
    return by


def rule_rows(rules: Sequence[Mapping[str, Any]], sources: Mapping[str, str]) -> list[dict]:
    """The rules in force, numbered as the policy numbers them, each with where it is from
    and the warning it earns (allow_all.py), if any."""
    where = sources.get("approval.rules", "config")
    return [
        {
            "number": number,
            "tool": rule["tool"],
            "match": rule.get("match"),
            "decision": rule["decision"],
            "sandbox": rule.get("sandbox"),
            "should_match": list(rule.get("should_match") or []),
            "should_not_match": list(rule.get("should_not_match") or []),
            "from": where,
            "warning": allows_everything(rule["tool"], rule.get("match"), rule["decision"]),
        }
        for number, rule in enumerate(rules, 1)
    ]


def explain(
    policy: Policy,
    tool: str,
    args: Mapping[str, Any],
    rules: Sequence[Mapping[str, Any]],
    sources: Mapping[str, str],
    workspace: Path | None,
) -> dict[str, Any]:
    """{"tool", "args", "decision", "by", "from", "rules"?, "commands"?} for one call."""
    verdict = policy.decide(tool, args, workspace=workspace)
    report: dict[str, Any] = {"tool": tool, "args": dict(args), **_verdict(verdict, sources)}
    numbers = [int(n) for n in RULE_NUMBER.findall(verdict.by)]
    rows = rule_rows(rules, sources)
    used = [rows[n - 1] for n in numbers if 0 < n <= len(rows)]
    if used:
        report["rule"] = used[0]
        if len(used) > 1:
            report["rules"] = used
    if tool == "shell":
        report["commands"] = _commands(policy, str(args.get("command", "")), sources, workspace)
    return report


def _verdict(verdict: Verdict, sources: Mapping[str, str]) -> dict[str, str]:
    return {"decision": verdict.decision, "by": verdict.by, "from": origin(verdict.by, sources)}


def _commands(
    policy: Policy, line: str, sources: Mapping[str, str], workspace: Path | None
) -> list[dict[str, Any]]:
    import shlex

    from agentcli.policy.bash.parse import analyse

    found = []
    for command in analyse(line).commands:
        alone = " ".join(HOLE if w is None else shlex.quote(w) for w in command.words)
        verdict = policy.decide("shell", {"command": alone}, workspace=workspace)
        found.append(
            {
                "command": " ".join("<?>" if w is None else shlex.quote(w) for w in command.words),
                "words": list(command.words),
                "via": command.via,
                **_verdict(verdict, sources),
            }
        )
    return found
