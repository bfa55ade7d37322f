"""Shared fixtures: every test gets its own config and data folders, never the user's."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "data"))
    for name in (
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "AGENTCLI_CONFIG",
        "AGENTCLI_DB",
        "AGENTCLI_MODEL",
        "VISUAL",
        "EDITOR",
        "AGENTCLI_DEBUG",
    ):
        monkeypatch.delenv(name, raising=False)


pytest_plugins = ["tests.tooling"]  # tool_env: run a tool the way ToolNode does
