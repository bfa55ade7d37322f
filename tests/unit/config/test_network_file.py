"""Adding a host to `[sandbox] network` (config/network_file.py): the one entry is added,
every other byte of the file kept (comments too), and a file whose `network = [` could be
read two ways is left alone, with the line to add."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from agentcli.config.network_file import add_network_host, network_entry
from agentcli.errors import ConfigError

ENTRY = "127.0.0.1:8080"


def added(path: Path, text: str) -> str:
    path.write_text(text)
    add_network_host(path, ENTRY)
    return path.read_text()


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (
            '# mine\n[sandbox]\nnetwork = ["pypi.org"]  # the index\n',
            '# mine\n[sandbox]\nnetwork = ["127.0.0.1:8080", "pypi.org"]  # the index\n',
        ),
        (
            '[sandbox]\nnetwork = [\n  # registries\n  "pypi.org",\n]\n',
            '[sandbox]\nnetwork = ["127.0.0.1:8080", \n  # registries\n  "pypi.org",\n]\n',
        ),
        ('sandbox.network = ["pypi.org"]\n', 'sandbox.network = ["127.0.0.1:8080", "pypi.org"]\n'),
        ("[sandbox]\nnetwork = false # off\n", '[sandbox]\nnetwork = ["127.0.0.1:8080"] # off\n'),
        (
            '[sandbox] # box\nmode = "read-only"\n',
            '[sandbox] # box\nnetwork = ["127.0.0.1:8080"]\nmode = "read-only"\n',
        ),
        ('[model]\nname = "m"', '[model]\nname = "m"\n\n[sandbox]\nnetwork = ["127.0.0.1:8080"]\n'),
        ("", '[sandbox]\nnetwork = ["127.0.0.1:8080"]\n'),
    ],
)
def test_the_entry_is_added_and_the_rest_kept(tmp_path: Path, before: str, after: str) -> None:
    assert added(tmp_path / "config.toml", before) == after


def test_a_decoy_list_in_a_string_or_another_table_is_not_edited(tmp_path: Path) -> None:
    decoy = (
        '[agent]\nsystem_prompt = """\nnetwork = ["x"]\n"""\n[sandbox]\nnetwork = ["pypi.org"]\n'
    )
    text = added(tmp_path / "config.toml", decoy)
    data = tomllib.loads(text)
    assert data["agent"]["system_prompt"] == 'network = ["x"]\n'
    assert data["sandbox"]["network"] == [ENTRY, "pypi.org"]


def test_an_entry_already_there_changes_nothing(tmp_path: Path) -> None:
    text = f'[sandbox]\nnetwork = ["{ENTRY}"]\n'
    assert added(tmp_path / "config.toml", text) == text


@pytest.mark.parametrize(
    "text",
    [
        "[sandbox]\nnetwork = true\n",  # every host already
        'sandbox.mode = "off"\n',  # a [sandbox] table appended would not read
        "[sandbox\n",  # not TOML
    ],
)
def test_a_file_that_cannot_take_it_is_left_alone(tmp_path: Path, text: str) -> None:
    path = tmp_path / "config.toml"
    path.write_text(text)
    with pytest.raises(ConfigError):
        add_network_host(path, ENTRY)
    assert path.read_text() == text


def test_a_missing_file_is_made_private(tmp_path: Path) -> None:
    path = tmp_path / "new" / "config.toml"
    add_network_host(path, network_entry("::1", 3000))
    assert tomllib.loads(path.read_text())["sandbox"]["network"] == ["[::1]:3000"]
    assert path.stat().st_mode & 0o777 == 0o600
