"""The snapshot store: what it keeps, what it leaves out, and that restoring writes only
inside the workspace and never through the person's git configuration."""

from __future__ import annotations

import os
import subprocess
import threading
from pathlib import Path

import pytest

from agentcli.undo.call_snapshots import WorkspaceSnapshots
from agentcli.undo.rewind import ChangedSince, plan, restore
from agentcli.undo.shadow_git import ShadowRepo
from tests.helpers.undo import around


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "work"
    (root / "dir").mkdir(parents=True)
    (root / "dir" / "a.txt").write_text("a\n")
    (root / "b.bin").write_bytes(bytes(range(256)))
    return root


@pytest.fixture
def snapshots(tmp_path: Path) -> WorkspaceSnapshots:
    return WorkspaceSnapshots(tmp_path / "data" / "snapshots", max_file_bytes=1000)


def files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink() and ".git" not in p.relative_to(root).parts
    }


def run_call(snapshots: WorkspaceSnapshots, workspace: Path, call: str, change) -> None:  # noqa: ANN001
    with around(snapshots, "t1", workspace, call, "shell"):
        change()


def test_a_call_is_recorded_and_undone_byte_for_byte(
    workspace: Path, snapshots: WorkspaceSnapshots
) -> None:
    before = files(workspace)

    def change() -> None:
        (workspace / "dir" / "a.txt").write_text("changed\n")
        (workspace / "b.bin").unlink()
        (workspace / "new").mkdir()
        (workspace / "new" / "c.txt").write_text("c")
        os.chmod(workspace / "new" / "c.txt", 0o755)

    run_call(snapshots, workspace, "call_1", change)
    [record] = snapshots.changes("t1", workspace)
    repo = snapshots.repo(workspace)
    assert repo.changed(record.before, record.after) == ["b.bin", "dir/a.txt", "new/c.txt"]
    restoration = plan(snapshots, workspace, [record])
    restore(snapshots, "t1", workspace, restoration, force=False)
    assert files(workspace) == before


def test_files_over_the_cap_are_named_and_never_restored(
    workspace: Path, snapshots: WorkspaceSnapshots
) -> None:
    big = workspace / "big.dat"
    big.write_bytes(b"x" * 5000)

    def change() -> None:
        big.write_bytes(b"y" * 6000)
        (workspace / "dir" / "a.txt").write_text("changed\n")

    run_call(snapshots, workspace, "call_1", change)
    [record] = snapshots.changes("t1", workspace)
    assert record.skipped == ["big.dat"]
    restoration = plan(snapshots, workspace, [record])
    assert restoration.not_kept == ["big.dat"] and restoration.paths == ["dir/a.txt"]
    restore(snapshots, "t1", workspace, restoration, force=False)
    assert big.read_bytes() == b"y" * 6000  # left as it is, not emptied or reverted


def test_a_file_growing_over_the_cap_is_not_put_back_small(
    workspace: Path, snapshots: WorkspaceSnapshots
) -> None:
    def grow() -> None:
        (workspace / "dir" / "a.txt").write_bytes(b"z" * 5000)

    run_call(snapshots, workspace, "call_1", grow)
    [record] = snapshots.changes("t1", workspace)
    restoration = plan(snapshots, workspace, [record])
    assert "dir/a.txt" in restoration.not_kept and "dir/a.txt" not in restoration.paths


def test_gitignored_files_and_the_workspaces_own_git_are_left_alone(
    workspace: Path, snapshots: WorkspaceSnapshots
) -> None:
    subprocess.run(["git", "init", "-q"], cwd=workspace, check=True)
    (workspace / ".gitignore").write_text("build/\n")
    (workspace / ".git" / "info" / "exclude").write_text("secret.txt\n")
    (workspace / "build").mkdir()
    git_before = {p: p.read_bytes() for p in (workspace / ".git").rglob("*") if p.is_file()}

    def change() -> None:
        (workspace / "build" / "out.o").write_text("object")
        (workspace / "secret.txt").write_text("s")
        (workspace / "dir" / "a.txt").write_text("changed\n")

    run_call(snapshots, workspace, "call_1", change)
    [record] = snapshots.changes("t1", workspace)
    assert snapshots.repo(workspace).changed(record.before, record.after) == ["dir/a.txt"]
    git_after = {p: p.read_bytes() for p in (workspace / ".git").rglob("*") if p.is_file()}
    assert git_after == git_before
    assert not snapshots.root.is_relative_to(workspace)


def test_a_file_changed_since_is_refused_unless_forced(
    workspace: Path, snapshots: WorkspaceSnapshots
) -> None:
    run_call(snapshots, workspace, "call_1", lambda: (workspace / "dir" / "a.txt").write_text("x"))
    (workspace / "dir" / "a.txt").write_text("the person's")
    [record] = snapshots.changes("t1", workspace)
    restoration = plan(snapshots, workspace, [record])
    with pytest.raises(ChangedSince, match="dir/a.txt"):
        restore(snapshots, "t1", workspace, restoration, force=False)
    assert (workspace / "dir" / "a.txt").read_text() == "the person's"
    restore(snapshots, "t1", workspace, restoration, force=True)
    assert (workspace / "dir" / "a.txt").read_text() == "a\n"


def test_restoring_never_writes_through_a_symlink_out_of_the_workspace(
    workspace: Path, snapshots: WorkspaceSnapshots, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()

    def swap() -> None:  # the call replaces dir/ with a link to a folder outside
        (workspace / "dir" / "a.txt").unlink()
        (workspace / "dir").rmdir()
        (workspace / "dir").symlink_to(outside)

    run_call(snapshots, workspace, "call_1", swap)
    [record] = snapshots.changes("t1", workspace)
    restore(snapshots, "t1", workspace, plan(snapshots, workspace, [record]), force=False)
    assert not (outside / "a.txt").exists()
    assert not (workspace / "dir").is_symlink()
    assert (workspace / "dir" / "a.txt").read_text() == "a\n"


def test_the_persons_git_configuration_never_runs(
    workspace: Path, snapshots: WorkspaceSnapshots, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A global filter the workspace's .gitattributes names would run on every snapshot."""
    marker = tmp_path / "filter-ran"
    config = tmp_path / "gitconfig"
    config.write_text(f'[filter "x"]\n\tclean = "touch {marker}; cat"\n')
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    monkeypatch.setenv("HOME", str(tmp_path))
    (workspace / ".gitattributes").write_text("* filter=x\n")
    run_call(snapshots, workspace, "call_1", lambda: (workspace / "dir" / "a.txt").write_text("y"))
    assert not marker.exists()
    assert snapshots.changes("t1", workspace)


def test_calls_of_a_group_run_side_by_side_and_one_record_holds_them_all(
    workspace: Path, snapshots: WorkspaceSnapshots
) -> None:
    """The executor snapshots before and after a whole group (undo/around_calls.py):
    the calls run at the same time (each waits for the others to be running), and the one
    record holds each one's finished change, never a temporary file."""
    meeting = threading.Barrier(4, timeout=20)

    def change(name: str) -> None:
        meeting.wait()  # broken unless all four run at once
        (workspace / f"{name}.tmp").write_text("half")
        (workspace / f"{name}.tmp").rename(workspace / f"{name}.txt")

    taken = snapshots.before(workspace)
    threads = [threading.Thread(target=change, args=(f"f{i}",)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    group = [(f"c{i}", "shell") for i in range(4)]
    snapshots.after("t1", workspace, taken, group, group="turn@3")
    snapshots.after("t1", workspace, taken, group, group="turn@3")  # again after a crash
    [record] = snapshots.changes("t1", workspace)
    assert record.calls == ["c0", "c1", "c2", "c3"] and record.group == "turn@3"
    changed = snapshots.repo(workspace).changed(record.before, record.after)
    assert sorted(changed) == ["f0.txt", "f1.txt", "f2.txt", "f3.txt"]


def test_a_huge_change_is_refused_not_hashed(
    workspace: Path, snapshots: WorkspaceSnapshots, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentcli.errors import SnapshotError
    from agentcli.undo import shadow_git

    monkeypatch.setattr(shadow_git, "MAX_CHANGED_FILES", 3)
    for i in range(5):
        (workspace / f"f{i}").write_text("x")
    with pytest.raises(SnapshotError, match="7 files changed or new"):
        ShadowRepo(snapshots.root, workspace, 1000).snapshot()


def test_a_link_put_in_a_folders_place_since_is_replaced_not_followed(
    workspace: Path, snapshots: WorkspaceSnapshots, tmp_path: Path
) -> None:
    """The call changed dir/a.txt; then dir became a link out of the workspace (a second
    call's doing, or anyone's): restoring dir/a.txt must not write into the link's target."""
    outside = tmp_path / "outside"
    outside.mkdir()
    run_call(snapshots, workspace, "call_1", lambda: (workspace / "dir" / "a.txt").write_text("x"))
    [record] = snapshots.changes("t1", workspace)
    (workspace / "dir" / "a.txt").unlink()
    (workspace / "dir").rmdir()
    (workspace / "dir").symlink_to(outside)
    restoration = plan(snapshots, workspace, [record])
    restore(snapshots, "t1", workspace, restoration, force=True)
    assert list(outside.iterdir()) == []
    assert (workspace / "dir" / "a.txt").read_text() == "a\n"
    assert not (workspace / "dir").is_symlink()


def test_agentclis_own_files_inside_the_workspace_are_never_snapshotted(tmp_path: Path) -> None:
    """A workspace that is the home folder holds the data folder: the store must not
    snapshot itself (each snapshot would hold the last), nor the thread database (undo
    would put an old database back under a running agentcli)."""
    home = tmp_path / "home"
    data = home / ".local" / "share" / "agent[cli]"  # a glob character in the name, too
    data.mkdir(parents=True)
    db = data / "threads.db"
    db.write_bytes(b"sqlite")
    snapshots = WorkspaceSnapshots(data / "snapshots", private=(db, Path(f"{db}-wal")))
    (home / "notes.txt").write_text("n")

    def change() -> None:
        (home / "notes.txt").write_text("changed")
        db.write_bytes(b"sqlite, later")
        Path(f"{db}-wal").write_bytes(b"wal")

    run_call(snapshots, home, "call_1", change)
    run_call(snapshots, home, "call_2", lambda: (home / "notes.txt").write_text("again"))
    repo = snapshots.repo(home)
    for record in snapshots.changes("t1", home):
        assert repo.changed(record.before, record.after) == ["notes.txt"]
    listed = repo.git("ls-tree", "-r", "--name-only", snapshots.changes("t1", home)[-1].after)
    assert listed.decode().split() == ["notes.txt"]
