"""The approval key: made once, whole, private, by whichever process comes first."""

from __future__ import annotations

import secrets
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from agentcli.agent.review.approval_seals import KEY_BYTES, KEY_FILE, ApprovalKey
from agentcli.errors import ConfigError
from tests.helpers.waiting import until

LOADER = """
import sys, time
from pathlib import Path
from agentcli.agent.review.approval_seals import ApprovalKey
go = Path(sys.argv[2])
while not go.exists():  # all start at once: a poll, not a pause
    time.sleep(0.001)
print(ApprovalKey.load(Path(sys.argv[1])).seal("probe"))
"""


def test_processes_starting_together_all_get_the_same_whole_key(tmp_path: Path) -> None:
    folder, go = tmp_path / "data", tmp_path / "go"
    children = [
        subprocess.Popen(
            [sys.executable, "-c", LOADER, str(folder), str(go)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(12)
    ]
    go.touch()
    results = [child.communicate(timeout=60) for child in children]
    assert [child.returncode for child in children] == [0] * 12, [err for _, err in results]
    assert len({out for out, _ in results}) == 1
    assert len((folder / KEY_FILE).read_bytes()) == KEY_BYTES
    assert (folder / KEY_FILE).stat().st_mode & 0o777 == 0o600
    assert sorted(p.name for p in folder.iterdir()) == [KEY_FILE]  # no draft left


def test_a_key_being_written_is_never_read_half_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = secrets.token_bytes
    filling, filled = threading.Event(), threading.Event()

    def slow(n: int) -> bytes:  # the first process stops halfway through making its key
        if threading.current_thread() is first and n == KEY_BYTES:
            filling.set()
            until(filled.is_set, what="the second load ended")
        return real(n)

    monkeypatch.setattr(secrets, "token_bytes", slow)
    seals: list[object] = []

    def load() -> None:
        try:
            seals.append(ApprovalKey.load(tmp_path).seal("probe"))
        except ConfigError as exc:
            seals.append(exc)

    first = threading.Thread(target=load)
    first.start()
    until(filling.is_set, what="the first load is making its key")
    load()  # meanwhile, a second process: it finds no whole key, so it makes its own
    filled.set()
    first.join()
    assert len(seals) == 2 and seals[0] == seals[1] and isinstance(seals[0], str), seals
    assert sorted(p.name for p in tmp_path.iterdir()) == [KEY_FILE]  # the first draft is gone


def test_the_key_is_kept_between_loads(tmp_path: Path) -> None:
    assert ApprovalKey.load(tmp_path).seal(1) == ApprovalKey.load(tmp_path).seal(1)


def test_a_key_others_can_read_is_refused(tmp_path: Path) -> None:
    ApprovalKey.load(tmp_path)
    (tmp_path / KEY_FILE).chmod(0o640)
    with pytest.raises(ConfigError, match="chmod 600"):
        ApprovalKey.load(tmp_path)


def test_a_short_key_is_damaged(tmp_path: Path) -> None:
    (tmp_path / KEY_FILE).write_bytes(b"short")
    (tmp_path / KEY_FILE).chmod(0o600)
    with pytest.raises(ConfigError, match="damaged"):
        ApprovalKey.load(tmp_path)
