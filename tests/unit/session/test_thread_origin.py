"""Which model and server continue a thread: flag > the thread's record > config, env,
default; and the key never follows a record to a server the person did not name."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.config import load_settings
from agentcli.errors import ConfigError
from agentcli.session.thread_origin import for_thread, hint_flags, recordable
from agentcli.thread_rows import ThreadRow, ThreadStatus

MINE = "http://127.0.0.1:11434/v1"
THEIRS = "http://127.0.0.1:8080/v1"


def row(model: str = "scripted", base_url: str | None = THEIRS) -> ThreadRow:
    return ThreadRow("t1", "title", ThreadStatus.IDLE, "", "", "/w", model, base_url=base_url)


@pytest.fixture(autouse=True)
def no_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "AGENTCLI_MODEL", "AGENTCLI_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))


def test_the_record_beats_the_environment_and_a_flag_beats_the_record(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", MINE)
    monkeypatch.setenv("AGENTCLI_MODEL", "llama")
    recorded = for_thread(load_settings(), row())
    assert (recorded.model, recorded.base_url) == ("scripted", THEIRS)  # no key: followed
    flags = {"model.name": "qwen", "model.base_url": MINE}
    flagged = for_thread(load_settings(None, flags), row())
    assert (flagged.model, flagged.base_url) == ("qwen", MINE)
    assert hint_flags(flagged) == f" --base-url {MINE}"
    assert hint_flags(recorded) == ""  # never a URL read from the store


def test_with_a_key_only_the_very_url_the_settings_name_is_followed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-mine")
    monkeypatch.setenv("OPENAI_BASE_URL", MINE)
    assert for_thread(load_settings(), row(base_url=MINE + "/")).base_url == MINE
    for other in (THEIRS, MINE.upper(), MINE.replace("127.0.0.1", "localhost"), MINE + " "):
        with pytest.raises(ConfigError, match="pass --base-url URL"):
            for_thread(load_settings(), row(base_url=other))
    flagged = load_settings(None, {"model.base_url": THEIRS})  # the person's choice
    assert for_thread(flagged, row(base_url=MINE)).base_url == THEIRS


def test_a_models_table_names_the_server_of_the_recorded_model(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        '[model]\nname = "gpt-4o"\napi_key = "sk-mine"\n'
        f'[models."scripted"]\nbase_url = "{THEIRS}"\n'
    )
    settings = for_thread(load_settings(config), row())
    assert (settings.model, settings.base_url, settings.api_key) == ("scripted", THEIRS, "sk-mine")
    with pytest.raises(ConfigError):  # the same record for a model the table does not match
        for_thread(load_settings(config), row(model="gpt-4o"))


def test_no_record_leaves_the_settings_and_credentials_are_never_recorded() -> None:
    settings = load_settings(None, {"model.base_url": MINE})
    assert for_thread(settings, row(model="", base_url=None)) == settings
    assert recordable(MINE) == MINE
    for url in ("http://u:p@host/v1", "http://host/v1?key=sk-1", "http://host/v1#x", "http://[/"):
        assert recordable(url) is None
