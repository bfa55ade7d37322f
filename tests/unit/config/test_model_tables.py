"""[models."GLOB"] tables: which apply, in which order, and what they never override."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.config import for_model, load_settings
from agentcli.errors import ConfigError

TABLES = """
[model]
name = "qwen2.5-7b-instruct"
max_tokens = 100
temperature = 0.7

[models."*"]
timeout = 30.0

[models."qwen*"]
max_tokens = 200
tool_choice = "required"

[models."qwen2.5-*"]
max_tokens = 300

[models."llama*"]
max_tokens = 400
"""


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(TABLES)
    return path


def test_every_matching_table_applies_and_the_last_written_wins(config: Path) -> None:
    s = load_settings(config)
    assert (s.max_tokens, s.tool_choice, s.timeout, s.temperature) == (300, "required", 30, 0.7)
    assert s.sources["model.max_tokens"] == f'[models."qwen2.5-*"] in {config}'


def test_order_in_the_file_not_specificity_decides(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text('[models."qwen2.5-*"]\nmax_tokens = 1\n[models."*"]\nmax_tokens = 2\n')
    assert load_settings(path, {"model.name": "qwen2.5-x"}).max_tokens == 2


def test_another_model_gets_its_own_tables_and_the_model_values_back(config: Path) -> None:
    s = for_model(load_settings(config), "llama3")
    assert (s.model, s.max_tokens, s.tool_choice, s.timeout) == ("llama3", 400, None, 30)
    assert s.sources["model.max_tokens"].startswith('[models."llama*"]')
    back = for_model(s, "gpt-4o")
    assert (back.max_tokens, back.tool_choice) == (100, None)
    assert back.sources["model.max_tokens"] == str(config)
    assert "model.tool_choice" not in back.sources


def test_flags_and_the_environment_beat_tables(
    config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    s = load_settings(config, {"model.max_tokens": 5})
    assert s.max_tokens == 5 and for_model(s, "llama").max_tokens == 5
    path = config.parent / "url.toml"
    path.write_text('[models."m*"]\nbase_url = "http://table/v1"\n')
    monkeypatch.setenv("OPENAI_BASE_URL", "http://env/v1")
    assert load_settings(path, {"model.name": "m1"}).base_url == "http://env/v1"
    monkeypatch.delenv("OPENAI_BASE_URL")
    assert load_settings(path, {"model.name": "m1"}).base_url == "http://table/v1"


def test_a_model_flag_picks_the_tables_of_that_model(config: Path) -> None:
    assert load_settings(config, {"model.name": "llama-3"}).max_tokens == 400
    assert load_settings(config, {"model.name": "mistral"}).max_tokens == 100


def test_tables_are_checked_like_model_keys(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text(
        '[models."a*"]\nmax_token = 3\nname = "x"\ntemperature = "hot"\n'
        '[models."b"]\ntool_choice = "two words"\n'
    )
    with pytest.raises(ConfigError) as caught:
        load_settings(path)
    problems = caught.value.problems
    assert any("unknown key 'max_token'" in p and "max_tokens" in p for p in problems)
    assert any("unknown key 'name'" in p for p in problems)
    assert any("temperature" in p and "expected a number" in p for p in problems)
    assert any("tool_choice" in p for p in problems)
    assert len(problems) == 4
