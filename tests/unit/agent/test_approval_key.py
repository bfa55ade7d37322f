"""The approval key: the store's, made once by whichever process comes first, the same for
every process on the store whatever its data folder; an installation's former key file
still verifies what it sealed and seals nothing new."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from agentcli.config import Settings
from agentcli.errors import ConfigError
from agentcli.threads.backends import open_store
from agentcli.threads.store_key import KEY_BYTES, KEY_FILE, KEY_NAME, ApprovalKey

LOADER = """
import sys, time
from pathlib import Path
from agentcli.threads.store_key import ApprovalKey
from agentcli.config import Settings
from agentcli.threads.backends import open_store
store = open_store(Settings(db=sys.argv[1]))  # the tables made: only the key is left to race
go = Path(sys.argv[2])
while not go.exists():
    time.sleep(0.001)
print(ApprovalKey.of_store(store, Path(sys.argv[3])).seal("probe"))
"""


@pytest.mark.backends
def test_processes_starting_together_all_get_the_same_key(database: str, tmp_path: Path) -> None:
    go = tmp_path / "go"
    children = [
        subprocess.Popen(  # each with a data folder of its own: the key is not there
            [sys.executable, "-c", LOADER, database, str(go), str(tmp_path / f"data{n}")],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(8)
    ]
    try:
        go.touch()
        results = [child.communicate(timeout=120) for child in children]
    finally:
        for child in children:
            child.kill()
    assert [child.returncode for child in children] == [0] * 8, [err for _, err in results]
    seals = {out.strip() for out, _ in results}
    assert len(seals) == 1
    store = open_store(Settings(db=database))
    assert ApprovalKey.of_store(store, tmp_path / "elsewhere").seal("probe") in seals
    rows = store._execute("SELECT name FROM agentcli_secrets").fetchall()
    assert [row[0] for row in rows] == [KEY_NAME]  # one key, whoever made it
    assert not any((tmp_path / f"data{n}").exists() for n in range(8))  # no file made


def test_each_store_has_a_key_of_its_own(tmp_path: Path) -> None:
    one, two = (open_store(Settings(db=str(tmp_path / f"{n}.db"))) for n in (1, 2))

    def seal(store: object) -> str:
        return ApprovalKey.of_store(store, tmp_path).seal(1)  # type: ignore[arg-type]

    assert seal(one) == seal(one) != seal(two)


def test_a_former_key_file_verifies_what_it_sealed_and_seals_nothing(tmp_path: Path) -> None:
    former = b"f" * KEY_BYTES
    (tmp_path / KEY_FILE).write_bytes(former)
    (tmp_path / KEY_FILE).chmod(0o600)
    store = open_store(Settings(db=str(tmp_path / "threads.db")))
    key = ApprovalKey.of_store(store, tmp_path)
    old = ApprovalKey(former).seal("call", "t", 3)
    assert key.check(old, "call", "t", 3)  # a call parked before the upgrade still runs
    assert not key.check(old, "call", "t", 4)
    assert key.seal("call", "t", 3) != old  # new seals are the store's
    elsewhere = ApprovalKey.of_store(store, tmp_path / "other")  # another installation
    assert elsewhere.check(key.seal("x"), "x") and not elsewhere.check(old, "call", "t", 3)


def test_a_former_key_others_can_read_is_refused(tmp_path: Path) -> None:
    (tmp_path / KEY_FILE).write_bytes(b"f" * KEY_BYTES)
    (tmp_path / KEY_FILE).chmod(0o640)
    store = open_store(Settings(db=str(tmp_path / "threads.db")))
    with pytest.raises(ConfigError, match="chmod 600"):
        ApprovalKey.of_store(store, tmp_path)
    (tmp_path / KEY_FILE).write_bytes(b"short")
    (tmp_path / KEY_FILE).chmod(0o600)
    with pytest.raises(ConfigError, match="damaged"):
        ApprovalKey.of_store(store, tmp_path)


@pytest.mark.backends
def test_a_damaged_store_key_is_refused_not_replaced(database: str, tmp_path: Path) -> None:
    store = open_store(Settings(db=database))
    ApprovalKey.of_store(store, tmp_path)
    store._execute("UPDATE agentcli_secrets SET secret = 'abc'")
    with pytest.raises(ConfigError, match="agentcli_secrets.*damaged"):
        ApprovalKey.of_store(store, tmp_path)
