"""What the unit tests of undo's attacks share: a workspace with one file, a snapshot store
beside it, the files of a folder (links and modes included), one call with its snapshots,
and undo of every call."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest

from agentcli.undo.call_snapshots import WorkspaceSnapshots
from agentcli.undo.rewind import plan, restore


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "work"
    (root / "dir").mkdir(parents=True)
    (root / "dir" / "a.txt").write_text("a\n")
    return root


@pytest.fixture
def snapshots(tmp_path: Path) -> WorkspaceSnapshots:
    return WorkspaceSnapshots(tmp_path / "data" / "snapshots", max_file_bytes=100_000)


@contextmanager
def around(
    snapshots: WorkspaceSnapshots,
    thread_id: str,
    workspace: Path,
    call_id: str,
    tool: str,
    paths: Sequence[str] | None = None,
) -> Iterator[None]:
    """One call (the body) as a group of its own, snapshotted before and after, as the
    executor brackets a group."""
    taken = snapshots.before(workspace, paths)
    try:
        yield
    finally:
        snapshots.after(thread_id, workspace, taken, [(call_id, tool)], None)


def files(root: Path) -> dict[str, bytes]:
    out = {}
    for p in sorted(root.rglob("*")):
        rel = str(p.relative_to(root))
        if p.is_symlink():
            out[rel] = b"-> " + os.fsencode(os.readlink(p))
        elif p.is_file():
            out[rel] = p.read_bytes() + f" mode={stat.S_IMODE(p.lstat().st_mode):o}".encode()
    return out


def call(snapshots: WorkspaceSnapshots, workspace: Path, change, name: str = "c1") -> None:  # noqa: ANN001
    with around(snapshots, "t1", workspace, name, "shell"):
        change()


def undo_all(snapshots: WorkspaceSnapshots, workspace: Path, force: bool = False) -> None:
    records = [c for c in snapshots.changes("t1", workspace) if c.tool != "undo"]
    restore(snapshots, "t1", workspace, plan(snapshots, workspace, records), force=force)
