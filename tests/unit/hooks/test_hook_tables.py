"""[[hooks.EVENT]] tables: both shapes read, every mistake reported, nothing from elsewhere."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.config import load_settings
from agentcli.errors import ConfigError


def load(tmp_path: Path, text: str):  # noqa: ANN201 - Settings
    path = tmp_path / "config.toml"
    path.write_text(text)
    return load_settings(path)


def test_both_shapes_read_in_order(tmp_path: Path) -> None:
    settings = load(
        tmp_path,
        """
[[hooks.PreToolUse]]
matcher = "Bash"
command = "one"
timeout = 5

[[hooks.PreToolUse]]
matcher = "Edit|Write"
hooks = [{ type = "command", command = "two" }, { command = "three", timeout = 1.5 }]

[[hooks.Stop]]
command = "four"
""",
    )
    assert settings.hooks_pre_tool_use == [
        {"matcher": "Bash", "command": "one", "timeout": 5.0},
        {"matcher": "Edit|Write", "command": "two", "timeout": 60.0},
        {"matcher": "Edit|Write", "command": "three", "timeout": 1.5},
    ]
    assert settings.hooks_stop == [{"matcher": "", "command": "four", "timeout": 60.0}]


BAD = [
    ('[[hooks.PreToolUse]]\nmatcher = "("\ncommand = "x"', "matcher"),
    ('[[hooks.PreToolUse]]\nmatcher = "Bash"', "command must be"),
    ('[[hooks.PreToolUse]]\ncommand = "x"\ntimeout = 0', "timeout must be more than 0"),
    ('[[hooks.PreToolUse]]\ncommand = "x"\ntimeout = "1"', "timeout must be a number"),
    ('[[hooks.PreToolUse]]\ncommand = "x"\nshell = "zsh"', "unknown key 'shell'"),
    ('[[hooks.PreToolUse]]\nhooks = [{ type = "prompt", prompt = "x" }]', "only command hooks"),
    ('[[hooks.PreToolUse]]\ncommand = "x"\nhooks = [{ command = "y" }]', "not both"),
    ('[[hooks.SessionStart]]\ncommand = "x"', "unknown key 'hooks.SessionStart'"),
    ('[hooks]\nPreToolUse = "x"', "hooks.PreToolUse"),
]


@pytest.mark.parametrize(("text", "said"), BAD)
def test_a_mistake_is_a_config_error(tmp_path: Path, text: str, said: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load(tmp_path, text)
    assert said in str(caught.value.lines)


def test_no_environment_variable_sets_a_hook(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("AGENTCLI_HOOKS", "AGENTCLI_HOOKS_PRETOOLUSE", "CLAUDE_HOOKS"):
        monkeypatch.setenv(name, '[{"command": "touch x"}]')
    settings = load(tmp_path, "")
    assert not any(getattr(settings, f"hooks_{a}") for a in ("pre_tool_use", "stop"))
