"""What no snapshot holds: names git refuses to store never stop a snapshot, and each call's
record names the files it may have changed unseen (ignored ones, git's own), for undo to
say it did not restore them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentcli.undo.call_snapshots import UNSEEN_NAMED, WorkspaceSnapshots
from agentcli.undo.rewind import plan, restore
from tests.helpers.undo import around


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "work"
    root.mkdir()
    (root / "a.txt").write_text("a\n")
    (root / ".gitignore").write_text(".env\nbuild/\n")
    (root / ".env").write_text("TOKEN=1\n")
    (root / "build").mkdir()
    (root / "build" / "out.o").write_text("o")
    return root


@pytest.fixture
def snapshots(tmp_path: Path) -> WorkspaceSnapshots:
    return WorkspaceSnapshots(tmp_path / "data" / "snapshots", max_file_bytes=1000)


@pytest.mark.parametrize(
    "name",
    [
        ".GIT/x",
        "sub/.Git/x",
        ".git./x",
        ".git /x",
        "git~1/x",
        "GIT~1/x",
        ".git:stream",
        "l:.gitmodules",
    ],
)
def test_a_name_git_refuses_is_left_out_not_a_reason_to_stop_every_snapshot(
    workspace: Path, snapshots: WorkspaceSnapshots, name: str
) -> None:
    """One such file (which a confined command may make) made git refuse every later
    snapshot, so no call after it could be undone."""
    link = name.startswith("l:")
    path = workspace / name.removeprefix("l:")
    path.parent.mkdir(parents=True, exist_ok=True)
    if link:
        path.symlink_to("a.txt")
    else:
        path.write_text("planted\n")

    def change() -> None:
        (workspace / "a.txt").write_text("changed\n")

    with around(snapshots, "t1", workspace, "c1", "shell"):
        change()
    [record] = snapshots.changes("t1", workspace)
    assert name.removeprefix("l:") in record.skipped  # named as not kept
    restoration = plan(snapshots, workspace, [record])
    assert restoration.paths == ["a.txt"]
    restore(snapshots, "t1", workspace, restoration, force=False)
    assert (workspace / "a.txt").read_text() == "a\n"


def test_a_call_that_may_change_any_file_names_the_ignored_ones(
    workspace: Path, snapshots: WorkspaceSnapshots
) -> None:
    with around(snapshots, "t1", workspace, "c1", "shell"):
        (workspace / ".env").unlink()
        (workspace / "a.txt").write_text("b\n")
    [record] = snapshots.changes("t1", workspace)
    assert record.unseen == [".env", "build/"]  # a folder is one entry
    restoration = plan(snapshots, workspace, [record])
    assert restoration.paths == ["a.txt"]  # .env: no snapshot holds it


def test_many_ignored_files_are_named_up_to_a_limit(
    workspace: Path, snapshots: WorkspaceSnapshots
) -> None:
    (workspace / ".gitignore").write_text("*.log\n")
    for n in range(UNSEEN_NAMED + 5):
        (workspace / f"{n:02d}.log").write_text("l")
    with around(snapshots, "t1", workspace, "c1", "shell"):
        pass
    [record] = snapshots.changes("t1", workspace)
    assert len(record.unseen) == UNSEEN_NAMED + 1 and record.unseen[-1] == "..."


def test_a_file_tool_call_names_only_its_own_path_when_unseen(
    workspace: Path, snapshots: WorkspaceSnapshots
) -> None:
    (workspace / ".git" / "hooks").mkdir(parents=True)
    (workspace / "hooks").symlink_to(".git/hooks")
    calls = [
        ("c1", "a.txt", []),
        ("c2", ".env", [".env"]),
        ("c3", ".git/hooks/pre-commit", [".git/hooks/pre-commit"]),
        ("c4", "hooks/post-checkout", ["hooks/post-checkout"]),  # through the link
    ]
    for call, path, _ in calls:
        with around(snapshots, "t1", workspace, call, "write_file", paths=[path]):
            (workspace / path).write_text("written\n")
    records = {r.call_id: r.unseen for r in snapshots.changes("t1", workspace)}
    assert records == {call: unseen for call, _, unseen in calls}


def test_agentclis_own_files_in_the_workspace_are_not_named_as_ignored(tmp_path: Path) -> None:
    home = tmp_path / "home"
    data = home / "data"
    data.mkdir(parents=True)
    db = data / "threads.db"
    db.write_bytes(b"sqlite")
    snapshots = WorkspaceSnapshots(data / "snapshots", private=(db,))
    (home / ".gitignore").write_text("cache/\n")
    (home / "cache").mkdir()
    (home / "cache" / "c").write_text("c")
    with around(snapshots, "t1", home, "c1", "shell"):
        os.utime(home / "cache" / "c")
    [record] = snapshots.changes("t1", home)
    assert record.unseen == ["cache/"]
