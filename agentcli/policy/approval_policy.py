"""Approval policy: for each tool call, allow, ask or deny, and who said so.

Order: denials first (flag, config list, deny rules), then the run's own flags
(--auto-approve, --approve TOOL), then ask rules, then allows (config list, allow
rules, then what the person allowed for this thread with `A`: rules scoped to a match, tried
with the config's, and whole tools), then the approval mode (approval_modes.py: what it lets
run unasked), then the default: ask.
Shell rules read the command with a bash grammar (agentcli/policy/shell_rules.py): a deny rule
that may match a part of the line that cannot be read asks a person, before the flags.

Path rules (file tools) match where the path leads, walked beneath the workspace as the tools
walk it (tools.paths), relative to it: an allow rule matches only a path that resolves inside
the workspace; a deny or ask rule also matches the path as typed, and a deny or ask rule written
for any file tool protects its paths from every file tool (tools.paths.path_matches says how
globs match). The tools ask ``Policy.protection`` again where the path led when they opened it.

What a rule's `match` is tested against is chosen by the tool, never by the keys its arguments
happen to have: shell, the command; the file tools, the path; fetch_url, the URL's host; other
tools, their `url` argument's host and their `path` argument (deny: either; allow: both).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentcli_tools.urls import UnsafeURL, host_of, parse_url

from agentcli.policy.approval_modes import DEFAULT_MODE, LABEL, MODES, Box, mode_grant
from agentcli.policy.rule_subjects import (
    FETCH_TOOL,
    FILE_TOOLS,
    Decision,
    file_glob,
    fits,
    on_files,
    path_rule_matches,
    subject_matches,
)
from agentcli.policy.thread_rules import THREAD_LABEL, thread_rules


@dataclass(frozen=True)
class Verdict:
    decision: Decision
    by: str  # "default", "flag", "config", "rule N", "thread", "mode NAME (...)"

    @property
    def reason(self) -> str:
        verb = {"allow": "allowed", "deny": "denied", "ask": "needs review"}[self.decision]
        return f"{verb} by {self.by}"

    @property
    def who(self) -> str:
        """Who decided: a flag, a rule the person wrote, the approval mode, or the person
        (`A`, or asking)."""
        if self.by.startswith("flag"):
            return "flag"
        if self.by.startswith(f"{LABEL} "):
            return LABEL
        return "rule" if self.by.startswith(("config", "rule")) else "person"

    @property
    def refusal(self) -> str:
        """What the model reads for a denied call, naming the setting that denied it."""
        where = " ([[approval.rules]] in the config file)" if self.by.startswith("rule") else ""
        return f"{self.reason}{where}: this call was not run"


@dataclass(frozen=True)
class Rule:
    tool: str
    decision: Decision
    match: str | None = None
    sandbox: str | None = None  # "off": an allowed command runs unconfined (sandboxing.py)


@dataclass(frozen=True)
class Policy:
    allow: frozenset[str] = frozenset()
    deny: frozenset[str] = frozenset()
    rules: tuple[Rule, ...] = ()
    flag_allow: frozenset[str] = frozenset()
    flag_deny: frozenset[str] = frozenset()
    auto_approve: bool = False
    thread_allow: frozenset[str] = field(default=frozenset())
    mode: str = DEFAULT_MODE  # --mode, /mode, [approval] mode (approval_modes.py)
    box: Box = field(default_factory=Box)  # what the mode needs to know of the run

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
        mode: str = DEFAULT_MODE,
        box: Box | None = None,
    ) -> Policy:
        if mode not in MODES:
            raise ValueError(f"unknown approval mode {mode!r} (one of {', '.join(MODES)})")
        return cls(
            allow=frozenset(allow),
            deny=frozenset(deny),
            rules=tuple(
                Rule(r["tool"], r["decision"], r.get("match"), r.get("sandbox")) for r in rules
            ),
            flag_allow=frozenset(flag_allow),
            flag_deny=frozenset(flag_deny),
            auto_approve=auto_approve,
            mode=mode,
            box=box or Box(),
        )

    def decide(
        self,
        tool: str,
        args: Mapping[str, Any],
        thread_allow: Iterable[str] = (),
        *,
        workspace: Path | None = None,
    ) -> Verdict:
        """The verdict on one call. ``workspace`` is where file paths are resolved: without
        it no allow rule matches a file path (it cannot be checked), deny rules still do."""
        if found := self._denied_or_hidden(tool, args, workspace):
            return found
        if self.auto_approve:
            return Verdict("allow", "flag --auto-approve")
        if tool in self.flag_allow:
            return Verdict("allow", "flag --approve")
        if found := self._rule(tool, args, "ask", workspace):
            return found
        if tool in self.allow:
            return Verdict("allow", "config approval.allow")
        names, scoped = thread_rules(thread_allow)
        if found := self._rule(tool, args, "allow", workspace, scoped):
            return found
        if tool in names:
            return Verdict("allow", THREAD_LABEL)
        if granted := mode_grant(self.mode, tool, args, workspace, self.box):
            return Verdict("allow", granted)
        return Verdict("ask", "default")

    def denial(
        self, tool: str, args: Mapping[str, Any], *, workspace: Path | None = None
    ) -> Verdict | None:
        """The verdict when this policy denies the call (a flag, the config's deny list, a
        deny rule), else None. `decide` asks it first, so nothing else (a thread's
        allowances, a mode, --auto-approve) undoes it; it is also all that an answer to a
        review must still meet, whoever gave the answer (agent/review/node.py). A deny rule
        the command may hide is a question, not a denial: the person answered it."""
        found = self._denied_or_hidden(tool, args, workspace)
        return found if found is not None and found.decision == "deny" else None

    def _denied_or_hidden(
        self, tool: str, args: Mapping[str, Any], workspace: Path | None
    ) -> Verdict | None:
        """A deny (a flag, the config's deny list, a deny rule), or the question a deny
        rule the command may hide asks (shell_rules.py); None if no deny applies."""
        if tool in self.flag_deny:
            return Verdict("deny", "flag --deny")
        if tool in self.deny:
            return Verdict("deny", "config approval.deny")
        return self._rule(tool, args, "deny", workspace)

    def redirect_refusal(self, first: str, url: str) -> str | None:
        """Why fetch_url, fetching `first`, must not request `url` (a redirect), or None.

        `first` was decided before it ran, by a rule, a flag or a person. Deny rules apply
        to every hop. A hop to the same site as `first` (same host, scheme and port, or
        the same host moved from http to https) goes on under that decision; a hop to
        another site must be allowed by the policy itself (a rule, the config or a flag):
        a person who approved `first` never saw it.
        """
        verdict = self.decide(FETCH_TOOL, {"url": url})
        if verdict.decision == "deny":
            return f"refusing to fetch {url!r}: {verdict.reason}"
        try:
            same_site = parse_url(first).same_site(parse_url(url))
        except UnsafeURL as exc:
            return f"refusing to fetch {url!r}: {exc}"
        if same_site or verdict.decision == "allow":
            return None
        host = host_of(url)
        return (
            f"{first!r} redirected to {url!r}, which was not fetched: its host '{host}' is "
            "not the approved one, and no approval rule allows it (setting approval.rules, "
            f'e.g. tool = "{FETCH_TOOL}", match = "{host}", decision = "allow"). '
            "Call fetch_url with that URL to have it reviewed."
        )

    def protection(
        self, tool: str, rel: str, typed: str | None = None, *, workspace: Path
    ) -> str | None:
        """Why the file tool ``tool`` must not open ``rel`` (workspace-relative, where a path
        led when the tool walked it), or None: a deny rule on file paths matching it, or an
        ask rule the flags do not override for this tool. An ask rule that also matches
        ``typed`` (the path the call named) was applied when the call was reviewed: a person
        said yes to it. The globs are matched exactly as ``decide`` matches them."""
        from agentcli_tools.path_globs import path_matches

        overridden = self.auto_approve or tool in self.flag_allow
        for number, rule in enumerate(self.rules, 1):
            if rule.match is None or rule.decision == "allow" or not on_files(rule.tool):
                continue
            glob = file_glob(rule.match, workspace)
            if glob is None or not path_matches(rel, glob, protect=True):
                continue
            if rule.decision == "ask" and (
                overridden or (typed is not None and path_matches(typed, glob, protect=True))
            ):
                continue
            return Verdict(rule.decision, _label(number, rule)).reason
        return None

    def _rule(
        self,
        tool: str,
        args: Mapping[str, Any],
        decision: Decision,
        workspace: Path | None,
        scoped: Iterable[tuple[str, str]] = (),
    ) -> Verdict | None:
        """The first rule of this decision that matches the call; `scoped`: allow rules the
        person kept for this thread (`A`), tried after the config's."""
        numbered = [(_label(n, r), r) for n, r in enumerate(self.rules, 1)]
        for name, match in scoped:
            rule = Rule(name, "allow", match)
            numbered.append((f"{THREAD_LABEL} ({name} {match})", rule))
        if tool == "shell":
            return self._shell_rule(str(args.get("command", "")), decision, numbered)
        for label, rule in numbered:
            if rule.decision != decision:
                continue
            if tool in FILE_TOOLS and rule.match is not None:
                # a deny or ask on a path holds for every file tool that could reach it
                applies = fnmatch.fnmatchcase(tool, rule.tool) or (
                    decision != "allow" and on_files(rule.tool)
                )
                hit = applies and path_rule_matches(args, rule.match, decision, workspace)
            elif fnmatch.fnmatchcase(tool, rule.tool):
                hit = rule.match is None or subject_matches(tool, args, rule.match, decision)
            else:
                hit = False
            if hit:
                return Verdict(decision, label)
        return None

    def _shell_rule(
        self, command: str, decision: Decision, numbered: list[tuple[str, Rule]]
    ) -> Verdict | None:
        """Shell rules, read with a bash grammar (agentcli/policy/bash/parse.py).

        An allowed chain needs an allow rule for each of its commands. A deny or ask rule that
        may match a part the parser cannot read (`$cmd -rf x`, `eval "$x"`) asks a person:
        for a deny rule that comes before the flags, so --auto-approve cannot run it.
        """
        rules = [
            (label, rule)
            for label, rule in numbered
            if rule.decision == decision and fnmatch.fnmatchcase("shell", rule.tool)
        ]
        if not rules:
            return None
        if wholesale := next((label for label, r in rules if r.match is None), None):
            return Verdict(decision, wholesale)
        from agentcli.policy import shell_rules

        if decision == "allow":
            used: list[str] = []
            parts = shell_rules.simple_commands(command)
            for part in parts or [""]:  # "" (not plain, or empty) fits no pattern below
                hit = next((label for label, r in rules if part and fits(part, r.match)), None)
                if hit is None:
                    return None
                used.append(hit)
            return Verdict("allow", " and ".join(dict.fromkeys(used)))
        found = [(label, shell_rules.finds(command, str(r.match))) for label, r in rules]
        if sure := next((label for label, how in found if how == "yes"), None):
            return Verdict(decision, sure)
        if unsure := next((label for label, how in found if how == "maybe"), None):
            return Verdict("ask", f"{unsure}, which the command may hide")
        return None


def _label(number: int, rule: Rule) -> str:
    return f"rule {number} ({rule.tool} {rule.match or '*'})"
