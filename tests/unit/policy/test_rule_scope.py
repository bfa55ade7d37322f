"""The rule `A` proposes for a call, allow rules that allow everything, a rule's examples,
a thread's scoped rules, and writing a rule into the config file."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.config.rule_file import append_rule, rule_table
from agentcli.errors import ConfigError
from agentcli.policy.allow_all import allows_everything
from agentcli.policy.approval_policy import Policy
from agentcli.policy.call_scope import fits, proposed_match
from agentcli.policy.rule_examples import example_problems
from agentcli.policy.thread_rules import scoped_entry


@pytest.mark.parametrize(
    ("command", "match"),
    [
        ("git status", "git status*"),
        ("git status --short", "git status*"),  # which the next bare `git status` fits
        ("npm run test -- --x", "npm run test -- --x"),  # npm runs scripts: exact
        ("cargo test --release", "cargo test --release"),  # unknown: exact
        ("ls -la", "ls *"),
        ("ls", "ls"),  # `ls*` would fit `lsof`
        ("make", "make"),
        ("git status && git status --short", "git status*"),
        ("python script.py --x", "python script.py --x"),  # never `python *`
        ("bash -c 'rm -rf x'", "bash -c 'rm -rf x'"),
        ("sudo rm -rf x", "sudo rm -rf x"),
        ("git add . && rm -rf x", "git add . && rm -rf x"),  # different commands: exact
        ("echo $(id)", "echo $(id)"),  # not plain: exact (and it matches nothing)
        ("ls [ab]*", "ls [[]ab][*]"),  # exact glob characters are escaped
    ],
)
def test_the_shell_rule_is_the_command_s_first_words(command: str, match: str) -> None:
    assert proposed_match("shell", {"command": command}, None) == match


def test_the_proposed_shell_rule_matches_its_call_and_no_interpreter() -> None:
    for command in ("git status", "npm run test -- --x", "python script.py --x", "sudo rm -rf x"):
        match = proposed_match("shell", {"command": command}, None)
        assert fits("shell", match, "shell", {"command": command}, None)
        assert allows_everything("shell", match, "allow") is None


def test_file_rules_are_the_folder_and_urls_the_host(tmp_path: Path) -> None:
    assert proposed_match("read_file", {"path": "src/a.py"}, tmp_path) == "src/*"
    assert proposed_match("write_file", {"path": "./a.txt"}, tmp_path) == "*"
    assert proposed_match("list_dir", {"path": "."}, tmp_path) == "*"
    assert fits("read_file", "src/*", "read_file", {"path": "src/b/c.py"}, tmp_path)
    assert not fits("read_file", "src/*", "read_file", {"path": "docs/c.md"}, tmp_path)
    assert not fits("read_file", "src/*", "write_file", {"path": "src/c.py"}, tmp_path)
    url = {"url": "https://API.Example.com/x?y"}
    assert proposed_match("fetch_url", url, None) == "api.example.com"
    assert proposed_match("calculator", {"expression": "1+1"}, None) is None


@pytest.mark.parametrize(
    "match",
    [
        "*", "python *", "python3 *", "/usr/bin/python *", "python3.12 *", "node *", "bash *",
        "sh *", "bash -c *", "npx *", "pnpx *", "bunx *", "uvx *", "pipx run *", "uv run *",
        "sudo *", "env *", "xargs *", "deno run *", "perl *", "ruby *", "php *", "zsh*",
    ],
)  # fmt: skip
def test_interpreters_followed_by_a_star_allow_everything(match: str) -> None:
    assert allows_everything("shell", match, "allow")


@pytest.mark.parametrize(
    "match", ["git status*", "python -m pytest *", "npx prettier *", "ls *", "echo *", "rm *"]
)
def test_named_commands_do_not(match: str) -> None:
    assert allows_everything("shell", match, "allow") is None


def test_only_allow_rules_are_warned_about() -> None:
    assert allows_everything("shell", "python *", "deny") is None
    assert allows_everything("shell", None, "allow") == "allows every shell command"
    assert allows_everything("read_file", "*", "allow")
    assert allows_everything("read_file", "src/*", "allow") is None


def test_examples_say_what_the_rule_does_to_them() -> None:
    rule = {
        "tool": "shell",
        "match": "rm *",
        "decision": "deny",
        "should_match": ["sudo rm -rf /", "rm x"],
        "should_not_match": ["echo $(rm -rf ~)", "ls"],
    }
    assert example_problems(rule) == [
        "`echo $(rm -rf ~)` should not match but is denied by this rule"
    ]
    paths = {"tool": "read_file", "match": "src/*", "decision": "allow"}
    assert example_problems({**paths, "should_match": ["src/a", "src/../x"]}) == [
        "`src/../x` should match but this rule does not match it"
    ]
    hosts = {"tool": "fetch_url", "match": "*.example.com", "decision": "allow"}
    assert (
        example_problems({**hosts, "should_match": ["https://a.example.com/x", "a.example.com"]})
        == []
    )


def test_a_scoped_thread_rule_needs_every_part_of_a_chain() -> None:
    policy = Policy.build(rules=[{"tool": "shell", "match": "ls*", "decision": "allow"}])
    thread = [scoped_entry("shell", "git status*")]
    verdict = policy.decide("shell", {"command": "git status && ls"}, thread)
    assert verdict.decision == "allow"
    assert verdict.by == "always for this thread (shell git status*) and rule 1 (shell ls*)"
    assert policy.decide("shell", {"command": "git push"}, thread).decision == "ask"
    assert policy.decide("shell", {"command": "git status; $x"}, thread).decision == "ask"
    assert policy.decide("read_file", {"path": "x"}, thread).decision == "ask"
    garbage = ['["shell"]', "[not json", '["shell", 3]', '["shell", ""]']
    assert policy.decide("shell", {"command": "git status"}, garbage).decision == "ask"


def test_a_rule_is_appended_byte_for_byte(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_bytes(b"# mine\r\n[model]\nname = 'x'  # no newline at the end")
    path.chmod(0o640)
    append_rule(path, rule_table("shell", "git x*", examples=('git "x"',)))
    text = path.read_bytes()
    assert text.startswith(b"# mine\r\n[model]\nname = 'x'  # no newline at the end\n\n")
    assert text.endswith(b'match = "git x*"\ndecision = "allow"\nshould_match = ["git \\"x\\""]\n')
    assert path.stat().st_mode & 0o777 == 0o640
    fresh = tmp_path / "new" / "config.toml"
    append_rule(fresh, rule_table("read_file", "src/*"))
    assert fresh.read_text().startswith("[[approval.rules]]\n")


def test_a_rule_that_would_break_the_file_is_not_written(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text("[approval]\nrules = []\n")  # an array already: a table cannot follow
    with pytest.raises(ConfigError, match="would not read"):
        append_rule(path, rule_table("shell", "git *"))
    failing = rule_table("shell", "git *", examples=("ls",))
    with pytest.raises(ConfigError, match="should match"):
        append_rule(tmp_path / "d.toml", failing)
    assert path.read_text() == "[approval]\nrules = []\n" and not (tmp_path / "d.toml").exists()


def test_a_client_s_match_goes_only_with_always() -> None:
    from agentcli.agent.review.answers import decisions_in

    ok = {"decisions": [{"type": "approve", "always": True, "match": "git *"}]}
    assert decisions_in(ok, 1)[0]["match"] == "git *"
    for bad in (
        {"type": "approve", "match": "git *"},
        {"type": "reject", "always": True, "match": "git *"},
        {"type": "approve", "always": True, "match": ""},
        {"type": "approve", "always": True, "match": ["git *"]},
        {"type": "approve", "always": True, "match": "x" * 501},
    ):
        with pytest.raises(ValueError, match="a match goes only"):
            decisions_in({"decisions": [bad]}, 1)
