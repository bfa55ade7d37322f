"""What the review says about undo, for each kind of call."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.snapshots.call_snapshots import WorkspaceSnapshots
from agentcli.snapshots.undo_limits import undo_limit


@pytest.fixture
def snapshots(tmp_path: Path) -> WorkspaceSnapshots:
    return WorkspaceSnapshots(tmp_path / "snapshots", max_file_bytes=100)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "work"
    root.mkdir()
    (root / ".gitignore").write_text("out/\n")
    (root / "big.bin").write_bytes(b"x" * 200)
    (root / "small.txt").write_text("s")
    return root


@pytest.mark.parametrize(
    ("tool", "args", "confined", "writable", "expected"),
    [
        ("read_file", {"path": "big.bin"}, True, (), None),
        ("calculator", {"expression": "1"}, True, (), None),
        ("shell", {"command": "rm -rf x"}, True, (), None),
        ("shell", {"command": "x"}, False, (), "the sandbox is off, so files it changes"),
        ("shell", {"command": "x"}, True, ("/home/me/.npm",), "[sandbox] writable (/home/me/.npm)"),
        ("write_file", {"path": "small.txt", "content": "t"}, True, (), None),
        ("write_file", {"path": "small.txt", "content": "t" * 101}, True, (), "small.txt is over"),
        ("edit_file", {"path": "big.bin", "old_text": "x", "new_text": "y"}, True, (), "over the"),
        ("write_file", {"path": "out/a.txt", "content": "t"}, True, (), "ignored (.gitignore)"),
        ("write_file", {"path": ".gitignore", "content": "*"}, True, (), "newly ignores"),
        ("files__write", {"path": "a"}, True, (), "files__write is not a built-in tool"),
    ],
)
def test_the_review_says_what_cannot_be_undone(
    snapshots: WorkspaceSnapshots,
    workspace: Path,
    tool: str,
    args: dict,
    confined: bool,
    writable: tuple[str, ...],
    expected: str | None,
) -> None:
    said = undo_limit(snapshots, workspace, tool, args, confined, writable)
    if expected is None:
        assert said is None
    else:
        assert said is not None and expected in said


def test_with_snapshots_off_every_changing_call_says_so(workspace: Path) -> None:
    assert undo_limit(None, workspace, "read_file", {"path": "a"}, True) is None
    said = undo_limit(None, workspace, "write_file", {"path": "a", "content": ""}, True)
    assert said == "no snapshots are kept ([undo] snapshots = false)"
