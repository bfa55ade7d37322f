"""Approval policy: for each tool call, allow, ask or deny, and who said so.

Order: denials first (flag, config list, deny rules), then the run's own flags
(--auto-approve, --approve TOOL), then ask rules, then allows (config list, allow
rules, tools the person allowed for this thread with `A`), then the default: ask.
Shell rules read the command with a bash grammar (agentcli/shellmatch.py): a deny rule
that may match a part of the line that cannot be read asks a person, before the flags.
"""

from __future__ import annotations

import fnmatch
import posixpath
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlsplit

Decision = Literal["allow", "ask", "deny"]

FILE_TOOLS = {"read_file", "write_file", "edit_file", "list_dir", "search_files"}


@dataclass(frozen=True)
class Verdict:
    decision: Decision
    by: str  # "default", "flag", "config", "rule N", "thread"

    @property
    def reason(self) -> str:
        verb = {"allow": "allowed", "deny": "denied", "ask": "needs review"}[self.decision]
        return f"{verb} by {self.by}"

    @property
    def who(self) -> str:
        """Who decided: a flag, a rule the person wrote, or the person (`A`, or asking)."""
        if self.by.startswith("flag"):
            return "flag"
        return "rule" if self.by.startswith(("config", "rule")) else "person"

    @property
    def refusal(self) -> str:
        """What the model reads for a denied call."""
        return f"{self.reason}: this call was not run"


@dataclass(frozen=True)
class Rule:
    tool: str
    decision: Decision
    match: str | None = None


@dataclass(frozen=True)
class Policy:
    allow: frozenset[str] = frozenset()
    deny: frozenset[str] = frozenset()
    rules: tuple[Rule, ...] = ()
    flag_allow: frozenset[str] = frozenset()
    flag_deny: frozenset[str] = frozenset()
    auto_approve: bool = False
    thread_allow: frozenset[str] = field(default=frozenset())

    @classmethod
    def build(
        cls,
        allow: Iterable[str] = (),
        deny: Iterable[str] = (),
        rules: Iterable[Mapping[str, Any]] = (),
        *,
        flag_allow: Iterable[str] = (),
        flag_deny: Iterable[str] = (),
        auto_approve: bool = False,
    ) -> Policy:
        return cls(
            allow=frozenset(allow),
            deny=frozenset(deny),
            rules=tuple(Rule(r["tool"], r["decision"], r.get("match")) for r in rules),
            flag_allow=frozenset(flag_allow),
            flag_deny=frozenset(flag_deny),
            auto_approve=auto_approve,
        )

    def decide(
        self, tool: str, args: Mapping[str, Any], thread_allow: Iterable[str] = ()
    ) -> Verdict:
        if tool in self.flag_deny:
            return Verdict("deny", "flag --deny")
        if tool in self.deny:
            return Verdict("deny", "config approval.deny")
        if found := self._rule(tool, args, "deny"):
            return found
        if self.auto_approve:
            return Verdict("allow", "flag --auto-approve")
        if tool in self.flag_allow:
            return Verdict("allow", "flag --approve")
        if found := self._rule(tool, args, "ask"):
            return found
        if tool in self.allow:
            return Verdict("allow", "config approval.allow")
        if found := self._rule(tool, args, "allow"):
            return found
        if tool in thread_allow:
            return Verdict("allow", "always for this thread")
        return Verdict("ask", "default")

    def _rule(self, tool: str, args: Mapping[str, Any], decision: Decision) -> Verdict | None:
        if tool == "shell":
            return self._shell_rule(str(args.get("command", "")), decision)
        for number, rule in enumerate(self.rules, 1):
            if rule.decision == decision and fnmatch.fnmatchcase(tool, rule.tool):
                if rule.match is None or matches(tool, args, rule.match, decision):
                    return Verdict(decision, _label(number, rule))
        return None

    def _shell_rule(self, command: str, decision: Decision) -> Verdict | None:
        """Shell rules, read with a bash grammar (agentcli/bashparse.py).

        An allowed chain needs an allow rule for each of its commands. A deny or ask rule that
        may match a part the parser cannot read (`$cmd -rf x`, `eval "$x"`) asks a person:
        for a deny rule that comes before the flags, so --auto-approve cannot run it.
        """
        rules = [
            (number, rule)
            for number, rule in enumerate(self.rules, 1)
            if rule.decision == decision and fnmatch.fnmatchcase("shell", rule.tool)
        ]
        if not rules:
            return None
        if wholesale := next(((n, r) for n, r in rules if r.match is None), None):
            return Verdict(decision, _label(*wholesale))
        from agentcli import shellmatch

        if decision == "allow":
            used: list[str] = []
            parts = shellmatch.simple_commands(command)
            for part in parts or [""]:  # "" (not plain, or empty) fits no pattern below
                hit = next((n for n, r in rules if part and _fits(part, r.match)), None)
                if hit is None:
                    return None
                used.append(_label(hit, self.rules[hit - 1]))
            return Verdict("allow", " and ".join(dict.fromkeys(used)))
        found = [(n, r, shellmatch.finds(command, str(r.match))) for n, r in rules]
        if sure := next(((n, r) for n, r, how in found if how == "yes"), None):
            return Verdict(decision, _label(*sure))
        if unsure := next(((n, r) for n, r, how in found if how == "maybe"), None):
            return Verdict("ask", f"{_label(*unsure)}, which the command may hide")
        return None


def _label(number: int, rule: Rule) -> str:
    return f"rule {number} ({rule.tool} {rule.match or '*'})"


def _fits(part: str, pattern: str | None) -> bool:
    return pattern is not None and fnmatch.fnmatchcase(part, pattern)


def matches(tool: str, args: Mapping[str, Any], pattern: str, decision: Decision) -> bool:
    """Does a rule's pattern match the call's main argument?

    A shell command satisfies an allow rule only when bash would run nothing but plain simple
    commands of literal words, each matching; deny and ask rules match any command found
    anywhere in it (agentcli/shellmatch.py). "Maybe" is not a match here: Policy asks then.
    """
    if tool == "shell":
        from agentcli import shellmatch

        command = str(args.get("command", ""))
        if decision == "allow":
            return shellmatch.allows(command, pattern)
        return shellmatch.finds(command, pattern) == "yes"
    subject = main_argument(tool, args)
    return subject is not None and fnmatch.fnmatchcase(subject, pattern)


def main_argument(tool: str, args: Mapping[str, Any]) -> str | None:
    """What a rule's `match` is tested against: the command, the URL's host, or the path."""
    if tool == "shell":
        return str(args.get("command", ""))
    if "url" in args:
        return urlsplit(str(args["url"])).hostname or ""
    if "path" in args or tool in FILE_TOOLS:
        return posixpath.normpath(str(args.get("path", ".")))
    return None


def shell_commands(command: str) -> list[str] | None:
    """The line's simple commands in shell quoting, or None unless it is only plain ones.

    Read with a bash grammar: substitutions, redirections, expansions, globs, comments, `&`
    and anything the parser cannot reduce to literal words make it None (agentcli/bashparse.py).
    """
    from agentcli import shellmatch

    return shellmatch.simple_commands(command)
