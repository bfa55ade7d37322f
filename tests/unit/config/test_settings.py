"""Settings: precedence, validation with the file and line named, the example documents all."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agentcli.agent.toolset.mcp.servers import call_timeout
from agentcli.config import FIELDS, load_settings
from agentcli.errors import ConfigError
from tests.helpers import ROOT


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text)
    return path


def test_defaults_without_any_file() -> None:
    settings = load_settings()
    assert settings.model == "gpt-4o-mini" and settings.max_steps == 25
    assert settings.db_path.name == "threads.db" and "agentcli" in str(settings.db_path)
    assert settings.config_path is None


def test_flags_beat_environment_beat_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path, '[model]\nname = "from-file"\nbase_url = "http://file/v1"\n')
    settings = load_settings(path)
    assert (settings.model, settings.sources["model.name"]) == ("from-file", str(path))
    monkeypatch.setenv("AGENTCLI_MODEL", "from-env")
    settings = load_settings(path)
    assert (settings.model, settings.sources["model.name"]) == ("from-env", "AGENTCLI_MODEL")
    assert settings.base_url == "http://file/v1"
    settings = load_settings(path, {"model.name": "from-flag", "model.base_url": None})
    assert (settings.model, settings.sources["model.name"]) == ("from-flag", "flag")


def test_default_file_location_and_agentcli_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    default = tmp_path / "xdg" / "agentcli" / "config.toml"
    default.parent.mkdir(parents=True)
    default.write_text("[agent]\nmax_steps = 7\n")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert load_settings().max_steps == 7
    other = write(tmp_path, "[agent]\nmax_steps = 9\n")
    monkeypatch.setenv("AGENTCLI_CONFIG", str(other))
    assert load_settings().max_steps == 9


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[model]\nname = \n", r"is not valid TOML: .*line 2"),
        ("[model]\nnmae = 'x'\n", r"unknown key 'model.nmae'"),
        (
            "[agent]\nmax_steps = 'ten'\n",
            r'agent.max_steps = "ten" in .*: expected a whole number of model turns, e.g. 25$',
        ),
        (
            "[agent]\nmax_steps = 0\n",
            r"agent.max_steps = 0 in .*: expected a whole number .*\(at least 1\)",
        ),
        (
            "[approval]\nallow = [1]\n",
            r"approval.allow = \[1\] in .*: expected a list of tool names",
        ),
        (
            "model = 'x'\n",
            r'model = "x" in .*: expected a \[section\] \(did you mean \[model\]\?\)',
        ),
        (
            "[[approval.rules]]\ntool = 'shell'\ndecision = 'maybe'\n",
            r'rules\]\] number 1 in .*: decision = "maybe": expected allow, ask or deny',
        ),
        (
            "[[approval.rules]]\ndecision = 'allow'\n",
            r"rules\]\] number 1 in .*: needs a tool name",
        ),
        ('[model.prices."m"]\ninput = 1\n', r"needs input and output prices"),
        (
            "[tools]\nmodules = [1]\n",
            r"tools.modules = \[1\] in .*: expected a list of module names or .py",
        ),
        (
            "[tools]\ndisabled = 'shell'\n",
            r'tools.disabled = "shell" in .*: expected a list of tool names',
        ),
        (
            "[mcp.servers.x]\nargs = []\n",
            r"\[mcp.servers.x\] in .*: needs either 'command' .* or 'url'",
        ),
        ("[mcp.servers.x]\ncommand = 'a'\nurl = 'http://h'\n", r"needs either 'command'"),
        ("[mcp.servers.x]\ncommand = 'a'\nheaders = {}\n", r"unknown key 'headers' \(allowed"),
        ("[mcp.servers.x]\ncommand = ''\n", r'command = "": expected a non-empty string'),
        ("[mcp.servers.x]\ncommand = 'a'\nargs = 'b'\n", r"args = .*: expected a list of strings"),
        (
            "[mcp.servers.x]\ncommand = 'a'\nargs = {b = 'c'}\n",
            r"args = .*: expected a list of strings",
        ),
        ("[mcp.servers.x]\ncommand = 'a'\nargs = [1]\n", r"args = .*: expected a list of strings"),
        (
            "[mcp.servers.x]\ncommand = 'a'\nenv = {A = 1}\n",
            r'env = \{"A": 1\}: expected a table of strings',
        ),
        ("[mcp.servers.x]\nurl = 'ftp://h'\n", r"'url' must start with http:// or https://"),
        ("[mcp.servers.x]\ncommand = 'a'\ntimeout = 0\n", r"timeout = .*: expected seconds"),
        ("[mcp.servers.x]\ncommand = 'a'\ntimeout = -1\n", r"timeout = .*: expected seconds"),
        ("[mcp.servers.x]\ncommand = 'a'\ntimeout = true\n", r"timeout = .*: expected seconds"),
        ("[mcp.servers.x]\ncommand = 'a'\ntimeout = 'soon'\n", r"timeout = .*: expected seconds"),
        ("[mcp.servers.x]\ncommand = 'a'\ntimeout = '0s'\n", r"timeout = .*: expected seconds"),
        ("[mcp.servers.x]\ncommand = 'a'\ntimeout = [5]\n", r"timeout = .*: expected seconds"),
        ("[mcp.servers.x]\ncommand = 'a'\ntimeout = nan\n", r"timeout = .*: expected seconds"),
        ("[mcp.servers.x]\ncommand = 'a'\ntimeout = inf\n", r"timeout = .*: expected seconds"),
        (
            "[mcp.servers.'a.b']\ncommand = 'a'\n",
            r"\[mcp.servers.a.b\] in .*: the name may only use",
        ),
        ("[mcp]\nservers = 1\n", r"mcp.servers = 1 in .*: expected \[mcp.servers.NAME\] tables"),
        ("[sandbox]\nnetwork = 'pypi.org'\n", r"expected true, false, or a list of hosts"),
        ("[sandbox]\nnetwork = []\n", r"an empty list: write network = false"),
        ("[sandbox]\nnetwork = [1]\n", r"network = \[1\] in .*: 1: not a string"),
        ("[sandbox]\nnetwork = ['a@b.org']\n", r'"a@b.org": user names and passwords'),
        ("[sandbox]\nnetwork = ['*']\n", r'"\*": a wildcard goes only first'),
        ("[sandbox]\nnetwork = ['https://pypi.org']\n", r"is not a host and port"),
        ("[sandbox]\nnetwork = ['pypi.org:0']\n", r"invalid port '0'"),
        ("[mcp.servers]\nx = 1\n", r"\[mcp.servers.x\] in .*: expected a \[mcp.servers.x\] table"),
    ],
)
def test_bad_config_names_the_file(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError, match=message) as caught:
        load_settings(path)
    assert str(path) in str(caught.value)


def test_an_mcp_servers_timeout_is_seconds_or_a_duration(tmp_path: Path) -> None:
    text = "[mcp.servers.a]\ncommand = 'a'\ntimeout = 2.5\n[mcp.servers.b]\nurl = 'http://h'\n"
    settings = load_settings(write(tmp_path, text + "timeout = '2m'\n"))
    assert [call_timeout(server) for server in settings.mcp_servers.values()] == [2.5, 120.0]
    assert call_timeout({"url": "http://h"}) == 120.0  # the default


def test_a_named_config_file_must_exist(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_settings(tmp_path / "missing.toml")


def test_bad_environment_value(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://x/v1")
    assert load_settings().base_url == "http://x/v1"


def test_network_takes_true_false_or_hosts(tmp_path: Path) -> None:
    hosts = ["pypi.org", "*.npmjs.org", "127.0.0.1:8080"]
    text = f"[sandbox]\nnetwork = {hosts!r}\n".replace("'", '"')
    assert load_settings(write(tmp_path, text)).sandbox_network == hosts
    assert load_settings(write(tmp_path, "[sandbox]\nnetwork = true\n")).sandbox_network is True


def test_the_example_documents_every_key_and_loads() -> None:
    example = (ROOT / "config.example.toml").read_text()
    section = None
    documented = set()
    for line in example.splitlines():
        if m := re.match(r"#?\s*\[\[?([^\]]+)\]\]?", line):
            section = m.group(1).replace('"', "")
            if section in FIELDS or section.startswith(("mcp.servers.", "model.prices.")):
                documented.add(".".join(section.split(".")[:2]))
        elif (m := re.match(r"#?\s*(\w+)\s*=", line)) and section and "." not in section:
            documented.add(f"{section}.{m.group(1)}")
    assert set(FIELDS) <= documented
    load_settings(ROOT / "config.example.toml")


def test_each_error_maps_to_its_exit_code_in_one_place() -> None:
    from agentcli.errors import (
        ConfigError,
        ExitCode,
        Interrupted,
        ModelError,
        RunStopped,
        SetupNeeded,
        ThreadBusy,
        ThreadNotFound,
        UsageError,
        exit_code_for,
    )

    assert [
        exit_code_for(e)
        for e in (
            UsageError("x"),
            ConfigError("x"),
            ThreadNotFound("x"),
            SetupNeeded("x"),
            Interrupted("x"),
            ModelError("x"),
            ThreadBusy("x"),
            RunStopped("x"),
            ValueError("a bug"),
        )
    ] == [2, 2, 2, 2, 130, 1, 1, 1, 1]
    assert ExitCode.AWAITING_REVIEW == 3


@pytest.mark.parametrize(("mode", "warned"), [("read-only", True), ("workspace-write", False)])
def test_writable_in_read_only_mode_is_said_to_be_ignored(
    tmp_path: Path, mode: str, warned: bool
) -> None:
    """Read-only stays read-only: `writable` does not open it, and a warning says so,
    whether the mode comes from the file or from --sandbox."""
    path = write(tmp_path, '[sandbox]\nwritable = ["~/.cache/pip"]\n')
    from_flag = load_settings(path, {"sandbox.mode": mode})
    in_file = load_settings(write(tmp_path, f'[sandbox]\nmode = "{mode}"\nwritable = ["x"]\n'))
    for settings in (from_flag, in_file):
        said = [w for w in settings.warnings if "writable" in w]
        assert bool(said) is warned
        if warned:
            assert said[0].startswith(f"[sandbox] writable in {path} is ignored in read-only")
