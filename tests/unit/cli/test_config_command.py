"""`config init|show` (cli/config_command.py): the shipped example is the root one, and
secrets never show in full."""

from __future__ import annotations

import tomllib
from importlib.resources import files
from pathlib import Path

import pytest

from agentcli.cli.config_command import _text, describe, example_text, mask, shown
from agentcli.config import FIELDS, load_settings
from tests.helpers import ROOT


def test_the_packaged_example_is_the_root_file() -> None:
    packaged = files("agentcli").joinpath("config.example.toml")
    assert packaged.read_bytes() == (ROOT / "config.example.toml").read_bytes()
    # a symlink in the source tree (builds copy its target), so the two cannot drift
    assert (ROOT / "agentcli" / "config.example.toml").is_symlink()
    tomllib.loads(example_text())


@pytest.mark.parametrize(
    ("secret", "expected"),
    [
        ("sk-test-1234567890", "sk-…7890"),
        ("sk-proj-" + "x" * 40 + "abcd", "sk-…abcd"),
        ("short-key", "(set)"),
        ("", "(set)"),
    ],
)
def test_mask_never_shows_the_whole_secret(secret: str, expected: str) -> None:
    assert mask(secret) == expected
    if secret:
        assert secret not in mask(secret)


def test_mcp_headers_and_env_are_masked() -> None:
    servers = {
        "docs": {"url": "http://x/mcp", "headers": {"Authorization": "Bearer abcdefghijklmnop"}},
        "files": {"command": "npx", "args": ["-y"], "env": {"TOKEN": "tok"}},
    }
    masked = shown("mcp.servers", servers)
    assert masked["docs"] == {"url": "http://x/mcp", "headers": {"Authorization": "Bea…mnop"}}
    assert masked["files"] == {"command": "npx", "args": ["-y"], "env": {"TOKEN": "(set)"}}
    assert shown("model.api_key", None) is None and shown("model.name", "m") == "m"


def test_describe_covers_every_key_with_a_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-1234567890")
    path = tmp_path / "c.toml"
    path.write_text("[agent]\nmax_steps = 4\n")
    report = describe(load_settings(path, {"model.name": "m"}), tmp_path)
    assert set(report["settings"]) == set(FIELDS)
    sources = {key: item["source"] for key, item in report["settings"].items()}
    assert sources["model.name"] == "flag" and sources["model.api_key"] == "OPENAI_API_KEY"
    assert sources["agent.max_steps"] == str(path) and sources["model.stream"] == "default"
    assert "sk-test-1234567890" not in str(report)
    assert report["config_file"] == str(path) and report["workspace"] == str(tmp_path.resolve())


def test_text_values_read_like_toml_and_are_clipped() -> None:
    assert _text(None) == "(unset)" and _text(True) == "true" and _text(["a"]) == '["a"]'
    assert _text("two\nlines") == '"two\\nlines"' and _text("plain") == "plain"
    long = _text("x" * 200)
    assert len(long) == 60 and long.endswith("…")
