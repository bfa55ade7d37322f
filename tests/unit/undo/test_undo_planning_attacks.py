"""Attacks on what undo plans: a file changed while undo asks, and a .gitignore the agent
wrote that hid its later changes from the snapshots."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.undo.call_snapshots import WorkspaceSnapshots
from agentcli.undo.rewind import ChangedSince, plan, restore
from tests.helpers.undo import call, snapshots, workspace

__all__ = ["snapshots", "workspace"]  # the fixtures


def test_a_file_changed_while_undo_waits_is_not_overwritten(
    workspace: Path, snapshots: WorkspaceSnapshots
) -> None:
    """Undo plans, asks the person, then restores: another agentcli thread (or the person)
    may change the file in between."""
    call(snapshots, workspace, lambda: (workspace / "dir" / "a.txt").write_text("agent\n"))
    records = snapshots.changes("t1", workspace)
    restoration = plan(snapshots, workspace, records)
    assert not restoration.outside
    (workspace / "dir" / "a.txt").write_text("written while undo asked\n")
    with pytest.raises(ChangedSince):
        restore(snapshots, "t1", workspace, restoration, force=False)
    assert (workspace / "dir" / "a.txt").read_text() == "written while undo asked\n"


def test_undo_says_when_the_agents_gitignore_hid_its_later_changes(
    workspace: Path, snapshots: WorkspaceSnapshots
) -> None:
    call(snapshots, workspace, lambda: (workspace / ".gitignore").write_text("*.log\n"))
    call(snapshots, workspace, lambda: (workspace / "x.log").write_text("hidden"), "c2")
    records = snapshots.changes("t1", workspace)
    restoration = plan(snapshots, workspace, records)
    assert restoration.paths == [".gitignore"]
    assert restoration.ignores_changed == [".gitignore"]
