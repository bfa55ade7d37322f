"""`[approval] expire_after`: durations read and said, checked when the config loads."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.config import load_settings
from agentcli.config.durations import parse_duration, say_duration
from agentcli.errors import ConfigError


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("90s", 90), ("30m", 1800), ("24h", 86400), ("7d", 604800), (" 1.5h ", 5400), ("1s", 1)],
)
def test_durations_people_write(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "24", "h", "24 hours", "-5m", "0s", "1h30m", "1e3s", "5w"])
def test_what_is_not_a_duration(text: str) -> None:
    with pytest.raises(ValueError, match="a duration like"):
        parse_duration(text)


@pytest.mark.parametrize(
    ("seconds", "said"),
    [
        (0, "0s"),
        (45.9, "45s"),
        (60, "1m"),
        (3599, "59m"),
        (3600, "1h"),
        (3900, "1h 5m"),
        (86400, "1d"),
        (2 * 86400 + 4 * 3600 + 59, "2d 4h"),
    ],
)
def test_durations_said(seconds: float, said: str) -> None:
    assert say_duration(seconds) == said


def test_the_config_checks_expire_after_and_on_expire(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('[approval]\nexpire_after = "30m"\n')
    settings = load_settings(path)
    assert (settings.expire_after, settings.on_expire) == ("30m", "deny")
    path.write_text('[approval]\nexpire_after = "tomorrow"\non_expire = "drop"\n')
    with pytest.raises(ConfigError) as error:
        load_settings(path)
    problems = error.value.args
    assert any('approval.expire_after = "tomorrow"' in p and '"24h"' in p for p in problems)
    assert any('approval.on_expire = "drop"' in p and '"deny" or "keep"' in p for p in problems)
