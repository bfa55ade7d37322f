"""Approval policy: for each tool call, allow, ask or deny, and who said so.

Order: denials first (flag, config list, deny rules), then the run's own flags
(--auto-approve, --approve TOOL), then ask rules, then allows (config list, allow
rules, tools the person allowed for this thread with `A`), then the default: ask.
"""

from __future__ import annotations

import fnmatch
import posixpath
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from tools.urls import UnsafeURL, host_of, host_pattern, parse_url

Decision = Literal["allow", "ask", "deny"]

FETCH_TOOL = "fetch_url"
FILE_TOOLS = {"read_file", "write_file", "edit_file", "list_dir", "search_files"}
_OPERATORS = set(";&|<>()")


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

    def _rule(self, tool: str, args: Mapping[str, Any], decision: Decision) -> Verdict | None:
        for number, rule in enumerate(self.rules, 1):
            if rule.decision == decision and fnmatch.fnmatchcase(tool, rule.tool):
                if rule.match is None or matches(tool, args, rule.match, decision):
                    return Verdict(decision, f"rule {number} ({rule.tool} {rule.match or '*'})")
        return None


def matches(tool: str, args: Mapping[str, Any], pattern: str, decision: Decision) -> bool:
    """Does a rule's pattern match the call's main argument?

    A shell command only satisfies an allow rule when it is one simple command (no
    chaining, pipes, substitution or redirection); deny and ask rules match any part.
    """
    if tool == "shell":
        parts = shell_commands(str(args.get("command", "")))
        if decision == "allow":
            return parts is not None and len(parts) == 1 and fnmatch.fnmatchcase(parts[0], pattern)
        candidates = [part for part in parts or [] if part] or [str(args.get("command", ""))]
        return any(fnmatch.fnmatchcase(part, pattern) for part in candidates)
    subject = main_argument(tool, args)
    if "url" in args:
        pattern = host_pattern(pattern)  # spelt as hosts are: case, trailing dot, IDNA
    return subject is not None and fnmatch.fnmatchcase(subject, pattern)


def main_argument(tool: str, args: Mapping[str, Any]) -> str | None:
    """What a rule's `match` is tested against: the command, the URL's host
    (tools.urls.host_of), or the path."""
    if tool == "shell":
        return str(args.get("command", ""))
    if "url" in args:
        # the host fetch_url connects to; None (matching no rule) when the URL is refused
        return host_of(str(args["url"]))
    if "path" in args or tool in FILE_TOOLS:
        return posixpath.normpath(str(args.get("path", ".")))
    return None


def shell_commands(command: str) -> list[str] | None:
    """Split a command line into its simple commands, or None when it substitutes.

    Anything a prefix glob could be fooled by (`$(..)`, backticks, `${..}`, redirections,
    newlines) makes the whole command unmatchable as an allow (None).
    """
    if any(mark in command for mark in ("`", "$(", "${", "\n", "\r", "<", ">")):
        return None
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    parts: list[list[str]] = [[]]
    try:
        for token in lexer:
            if token and set(token) <= _OPERATORS:
                parts.append([])
            else:
                parts[-1].append(token)
    except ValueError:  # unbalanced quotes
        return None
    return [" ".join(words) for words in parts]  # an operator always makes a second part
