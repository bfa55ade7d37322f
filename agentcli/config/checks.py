"""Checking config values: each value against its key's declared type (environment strings
converted), the [[approval.rules]], [mcp.servers.NAME] and [model.prices."NAME"] tables, and
the helpers every config message uses (did_you_mean, shown_value).

Each check records its problems in a list, so that every problem is reported at once.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from agentcli.config.durations import parse_duration
from agentcli.config.fields import CHOICES, FIELDS, FRACTION, SERVER_KEYS, SERVER_NAME, STRING_LISTS

BAD = object()  # a value that failed its check (the problem is recorded)


def did_you_mean(name: str, known: Iterable[str], form: str = "'{}'") -> str:
    """` (did you mean 'shell'?)` when a known name is close to `name`, else nothing."""
    import difflib

    close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    return f" (did you mean {form.format(close[0])}?)" if close else ""


def shown_value(value: Any) -> str:
    """A value as it would be written in TOML (near enough), clipped for one line."""
    import json

    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    if isinstance(value, bool):
        text = "true" if value else "false"
    return text if len(text) <= 60 else text[:59] + "…"


# What each kind of value should look like, for the messages (a key's own hint comes first).
EXPECTED_KIND = {
    str: 'a string in quotes, e.g. "text"',
    int: "a whole number, e.g. 3",
    float: "a number, e.g. 1.5",
    bool: "true or false",
    list: 'a list, e.g. ["a", "b"]',
    dict: "a table",
}


def coerce(key: str, value: Any, origin: str, problems: list[str], from_env: bool = False) -> Any:
    """Check one value against its declared type; environment strings are converted.
    A problem is recorded and BAD returned when it does not fit."""
    fld = FIELDS[key]
    want = fld.type
    where = (
        f"{origin} = {shown_value(value)}"
        if from_env
        else (f"{key} = {shown_value(value)} in {origin}")
    )
    expected = fld.expect or EXPECTED_KIND[want]
    if from_env and want is not str:
        try:
            value = {"true": True, "false": False}[value.lower()] if want is bool else want(value)
        except (KeyError, ValueError):
            problems.append(f"{where}: expected {expected}")
            return BAD
    if key == "sandbox.network" and isinstance(value, list):
        return _network_hosts(value, where, problems)
    ok = isinstance(value, want) or (want is float and isinstance(value, int))
    if not ok or (want in (int, float) and isinstance(value, bool)):
        problems.append(f"{where}: expected {expected}")
        return BAD
    if key in STRING_LISTS and not all(isinstance(item, str) for item in value):
        problems.append(f"{where}: expected {expected}")
        return BAD
    if key == "model.tool_choice" and not re.fullmatch(r"[A-Za-z0-9_.:-]{1,128}", value):
        problems.append(f"{where}: expected {expected}")
        return BAD
    if key == "approval.expire_after":
        try:
            parse_duration(value)
        except ValueError:
            problems.append(f"{where}: expected {expected}")
            return BAD
    if key in CHOICES and value not in CHOICES[key]:
        problems.append(f"{where}: expected {expected}")
        return BAD
    if key == "agent.max_repeated_calls" and value == 1:  # a call is not repeated by itself
        problems.append(f"{where}: expected {expected} (0, or at least 2)")
        return BAD
    least = 1 if key.startswith("agent.") or key == "model.max_tokens" else 0
    least = 0 if key == "agent.max_repeated_calls" else least
    if fld.expect == FRACTION and not 0 < value <= 1:
        problems.append(f"{where}: expected {expected}")
        return BAD
    if want in (int, float) and value < least:
        problems.append(f"{where}: expected {expected} (at least {least})")
        return BAD
    return float(value) if want is float else value


def _network_hosts(value: list[Any], where: str, problems: list[str]) -> Any:
    """`[sandbox] network` as a list: the hosts the egress proxy lets commands reach, each
    read as fetch_url reads hosts (agentcli_tools/egress.py)."""
    from agentcli_tools.egress import entry_problem

    found = [(item, entry_problem(item)) for item in value]
    bad = [f"{shown_value(item)}: {why}" for item, why in found if why]
    if bad or not value:
        why = "; ".join(bad) or "an empty list: write network = false"
        problems.append(f"{where}: {why}")
        return BAD
    return list(value)


def check_rules(rules: list[Any], origin: str, problems: list[str]) -> None:
    for i, rule in enumerate(rules, 1):
        where = f"[[approval.rules]] number {i} in {origin}"
        if not isinstance(rule, dict) or not isinstance(rule.get("tool"), str):
            problems.append(f'{where}: needs a tool name, e.g. tool = "shell"')
            continue
        if rule.get("decision") not in ("allow", "ask", "deny"):
            got = shown_value(rule.get("decision"))
            problems.append(f"{where}: decision = {got}: expected allow, ask or deny")
        unknown = set(rule) - {*RULE_KEYS, "should_match", "should_not_match"}
        if unknown:
            names = ", ".join(sorted(unknown))
            problems.append(
                f"{where}: unknown key {names} (a rule has tool, match, decision, sandbox,"
                " should_match and should_not_match)"
            )
        if "sandbox" in rule and (
            rule["sandbox"] != "off"
            or rule["tool"] != "shell"
            or rule.get("decision") != "allow"
            or not rule.get("match")
        ):
            problems.append(
                f'{where}: sandbox = "off" goes only on a shell allow rule with a match'
                " (it runs the matched commands unconfined)"
            )
        if not isinstance(rule.get("match", ""), str):
            got = shown_value(rule["match"])
            problems.append(f'{where}: match = {got}: expected a string, e.g. "git *"')
        elif "match" in rule:
            from agentcli.policy.rule_subjects import rule_problem

            if problem := rule_problem(rule["tool"], rule["match"]):
                problems.append(f"{where} ({rule['tool']}): {problem}")
        _check_examples(rule, where, problems)


RULE_KEYS = ("tool", "match", "decision", "sandbox")


def _check_examples(rule: dict[str, Any], where: str, problems: list[str]) -> None:
    """`should_match` and `should_not_match`: lists of strings the rule is tried on, each
    failure a problem naming the rule (number, tool, match)."""
    from agentcli.policy.rule_examples import EXAMPLE_KEYS, example_problems

    lists = {key: rule[key] for key in EXAMPLE_KEYS if key in rule}
    for key, value in list(lists.items()):
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            problems.append(f'{where}: {key} = {shown_value(value)}: expected ["a", "b"]')
            del lists[key]
    if not lists or rule.get("decision") not in ("allow", "ask", "deny"):
        return
    if not isinstance(rule.get("match", ""), str):
        return
    named = f"{where} ({rule['tool']} {rule.get('match') or '*'})"
    checked = {k: v for k, v in rule.items() if k not in EXAMPLE_KEYS} | lists
    problems.extend(f"{named}: {problem}" for problem in example_problems(checked))


def check_servers(servers: dict[str, Any], origin: str, problems: list[str]) -> None:
    """Each [mcp.servers.NAME] table: `command` (+ `args`, `env`) or `url` (+ `headers`)."""
    for name, server in servers.items():
        where = f"[mcp.servers.{name}] in {origin}"
        if not SERVER_NAME.fullmatch(name):
            problems.append(f"{where}: the name may only use letters, digits, '_' and '-'")
        if not isinstance(server, dict):
            problems.append(f"{where}: expected a [mcp.servers.{name}] table")
            continue
        if ("command" in server) == ("url" in server):
            problems.append(f"{where}: needs either 'command' (stdio) or 'url' (HTTP)")
            continue
        own = ("command", "args", "env") if "command" in server else ("url", "headers")
        allowed = (*own, "timeout")
        for key, value in server.items():
            if key == "timeout":
                if not _timeout_ok(value):
                    problems.append(
                        f"{where}: timeout = {shown_value(value)}: expected seconds (a number"
                        f' over zero) or a duration like "2m"'
                    )
            elif key not in allowed:
                problems.append(f"{where}: unknown key '{key}' (allowed: {', '.join(allowed)})")
            elif not _server_value_ok(value, SERVER_KEYS[key]):
                kind = {str: "a non-empty string", list: "a list of strings"}
                expected = kind.get(SERVER_KEYS[key], "a table of strings")
                problems.append(f"{where}: {key} = {shown_value(value)}: expected {expected}")
        if not server.get("url", "http://").startswith(("http://", "https://")):
            problems.append(f"{where}: 'url' must start with http:// or https://")


def _timeout_ok(value: Any) -> bool:
    """A server's call timeout: a positive number of seconds, or a duration string."""
    if isinstance(value, str):
        try:
            return parse_duration(value) > 0
        except ValueError:
            return False
    return isinstance(value, int | float) and not isinstance(value, bool) and 0 < value < 1e9


def _server_value_ok(value: Any, want: type) -> bool:
    """A non-empty string, a list of strings or a table of strings, as `want` says."""
    if isinstance(value, str):
        return want is str and bool(value)
    if isinstance(value, dict):
        return want is dict and all(isinstance(item, str) for item in value.values())
    return want is list and isinstance(value, list) and all(isinstance(i, str) for i in value)


def check_prices(prices: dict[str, Any], origin: str, problems: list[str]) -> None:
    """Each [model.prices."NAME"] table: `input` and `output` in USD per million tokens."""
    for name, price in prices.items():
        ok = isinstance(price, dict) and set(price) == {"input", "output"}
        if not ok or not all(isinstance(v, int | float) and v >= 0 for v in price.values()):
            problems.append(
                f'[model.prices."{name}"] in {origin}: needs input and output prices'
                " (USD per million tokens), e.g. input = 0.15, output = 0.6"
            )
