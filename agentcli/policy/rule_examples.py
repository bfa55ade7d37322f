"""A rule's own examples, `should_match` and `should_not_match`, checked when the config loads.

Each example is what the rule's `match` is tested against for its tool (rule_subjects.py): a
command line for the shell, a workspace-relative path for the file tools, a URL (or a host)
for fetch_url; for other tools a URL when it has `://`, else a path. The rule is tried alone,
exactly as the policy tries it (the shell's parts read with the bash grammar, a path walked
in an empty folder standing for the workspace), so an example proves what the rule does.
"""

from __future__ import annotations

import fnmatch
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentcli.policy.approval_policy import Policy, Rule
from agentcli.policy.rule_subjects import FETCH_TOOL, FILE_TOOLS

EXAMPLE_KEYS = ("should_match", "should_not_match")
DONE = {"allow": "allowed", "deny": "denied", "ask": "sent to review"}


def example_call(tool_pattern: str, example: str) -> tuple[str, dict[str, str]]:
    """The call an example stands for: a tool the rule is for, with the example as its
    subject."""
    tool = tool_pattern
    if any(c in tool_pattern for c in "*?["):
        known = ["shell", FETCH_TOOL, *sorted(FILE_TOOLS)]
        tool = next((t for t in known if fnmatch.fnmatchcase(t, tool_pattern)), tool_pattern)
    if tool == "shell":
        return tool, {"command": example}
    if tool in FILE_TOOLS:
        return tool, {"path": example}
    if tool == FETCH_TOOL or "://" in example:
        return tool, {"url": example if "://" in example else f"https://{example}"}
    return tool, {"path": example}


def example_problems(rule: Mapping[str, Any]) -> list[str]:
    """What the rule does to its examples that they say it should not: one line each."""
    one = Rule(rule["tool"], rule["decision"], rule.get("match"), rule.get("sandbox"))
    policy = Policy(rules=(one,))
    problems: list[str] = []
    with tempfile.TemporaryDirectory(prefix="agentcli-rule-") as folder:
        workspace = Path(folder)
        for key in EXAMPLE_KEYS:
            for example in rule.get(key) or []:
                tool, args = example_call(one.tool, example)
                verdict = policy.decide(tool, args, workspace=workspace)
                hit = verdict.by.startswith("rule 1")
                if key == "should_match" and not hit:
                    problems.append(f"`{example}` should match but this rule does not match it")
                elif key == "should_not_match" and hit:
                    how = DONE[verdict.decision]
                    if verdict.by.endswith("may hide"):
                        how = f"{how}, as the rule may match a part it cannot read,"
                    problems.append(f"`{example}` should not match but is {how} by this rule")
    return problems
