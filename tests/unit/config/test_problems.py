"""Configuration that tells the truth: every problem at once, in words for people, and tool
names in the approval config and flags checked against the tools a session has."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.agent.toolset.loading import list_tools
from agentcli.agent.toolset.tool_names import config_name_problems, flag_problems
from agentcli.config import load_settings
from agentcli.errors import ConfigError

BUILTINS = ["read_file", "write_file", "shell", "fetch_url", "calculator"]


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text)
    return path


def test_every_problem_is_reported_at_once_one_line_each(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        '[model]\ntimeout = "abc"\nnmae = "x"\nstream = 1\n'
        "[agent]\nmax_steps = 0\n"
        "[[approval.rules]]\ntool = 'shell'\ndecision = 'maybe'\n"
        '[model.prices."m"]\ninput = 1\n',
    )
    with pytest.raises(ConfigError) as caught:
        load_settings(path)
    lines = caught.value.lines
    assert lines == str(caught.value).splitlines() and len(lines) == 6
    assert lines[0] == f'model.timeout = "abc" in {path}: expected a number of seconds, e.g. 60'
    assert lines[1] == (
        f"unknown key 'model.nmae' in config file {path} (did you mean 'model.name'?)"
    )
    assert lines[2] == f"model.stream = 1 in {path}: expected true or false"
    assert "agent.max_steps = 0" in lines[3] and "(at least 1)" in lines[3]
    assert 'decision = "maybe": expected allow, ask or deny' in lines[4]
    assert "needs input and output prices" in lines[5]


def test_an_environment_value_reads_for_people(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTCLI_MODEL", "m")  # a string: always fine
    assert load_settings().model == "m"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[tools]\nshell_timeout = true\n", "expected a number of seconds, e.g. 120"),
        ("[model]\nmax_retries = 1.5\n", "expected a whole number, e.g. 2"),
        ("[model]\nname = 3\n", 'expected a string in quotes, e.g. "text"'),
        ("[tools]\nallow_private_urls = 'yes'\n", "expected true or false"),
    ],
)
def test_type_errors_say_what_is_expected(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load_settings(path)
    key = text.split("\n")[1].split(" =")[0]
    assert str(caught.value).startswith(f"{text.split(']')[0][1:]}.{key} = ")
    assert str(caught.value).endswith(f"in {path}: {message}")
    assert "must be a" not in str(caught.value)


def test_unknown_tool_names_in_allow_deny_and_rules_are_all_named(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        '[approval]\nallow = ["read_file", "calculater"]\ndeny = ["shel"]\n'
        '[[approval.rules]]\ntool = "fetch_ur"\nmatch = "example.com"\ndecision = "allow"\n'
        '[[approval.rules]]\ntool = "zzz"\ndecision = "deny"\n',
    )
    settings = load_settings(path)  # names are checked against the tools, not here
    with pytest.raises(ConfigError) as caught:
        list_tools(settings, warn=print)
    lines = caught.value.lines
    assert lines == [
        f'approval.allow = ["read_file", "calculater"] in {path}: no tool is named'
        " 'calculater' (did you mean 'calculator'?)",
        f"approval.deny = [\"shel\"] in {path}: no tool is named 'shel' (did you mean 'shell'?)",
        f'[[approval.rules]] number 1 in {path}: tool = "fetch_ur": no tool is named'
        " 'fetch_ur' (did you mean 'fetch_url'?)",
        f"[[approval.rules]] number 2 in {path}: tool = \"zzz\": no tool is named 'zzz'",
    ]


def test_known_names_pass_and_a_disabled_tool_may_still_be_denied(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        '[approval]\ndeny = ["shell"]\n[tools]\ndisabled = ["shell"]\n'
        '[[approval.rules]]\ntool = "read_file"\ndecision = "allow"\n',
    )
    names = [entry.name for entry in list_tools(load_settings(path), warn=print)]
    assert "shell" not in names and "read_file" in names


def test_mcp_tool_names_are_checked_unless_the_server_gave_no_tools(tmp_path: Path) -> None:
    path = write(tmp_path, '[approval]\ndeny = ["notes__del", "notes__delete"]\n')
    settings = load_settings(path)
    known = [*BUILTINS, "notes__delete"]
    assert config_name_problems(settings, known) == [
        f'approval.deny = ["notes__del", "notes__delete"] in {path}: no tool is named'
        " 'notes__del' (did you mean 'notes__delete'?)"
    ]
    assert config_name_problems(settings, BUILTINS, unchecked={"notes"}) == []


def test_flags_are_checked_with_did_you_mean() -> None:
    assert flag_problems(BUILTINS, ["shel", "read_file"], ["nothing_like_it"]) == [
        "--approve shel: no tool is named 'shel' (did you mean 'shell'?)",
        "--deny nothing_like_it: no tool is named 'nothing_like_it' (agentcli tools lists them)",
    ]
    assert flag_problems(BUILTINS, ["shell"], None) == []
