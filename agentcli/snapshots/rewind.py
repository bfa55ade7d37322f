"""Putting back what a run of calls changed: which files, to what, and which of them were
changed outside agentcli since (those are not overwritten unless forced)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from agentcli.errors import AgentcliError
from agentcli.snapshots.call_snapshots import UNDO, CallChange, WorkspaceSnapshots
from agentcli.snapshots.shadow_git import ShadowRepo


class ChangedSince(AgentcliError):
    """Files the calls changed were changed again outside agentcli: not overwritten."""

    def __init__(self, paths: list[str]) -> None:
        self.paths = paths
        shown = ", ".join(paths[:10]) + (f" and {len(paths) - 10} more" if len(paths) > 10 else "")
        super().__init__(
            f"changed outside agentcli since: {shown}; --force overwrites them"
            " (their current content is kept in the snapshots)"
        )


@dataclass
class Restoration:
    """What putting back the files a run of calls changed does: each file as it was before
    the first call that changed it."""

    sources: dict[str, list[str]]  # tree -> the files written back (or removed) from it
    outside: list[str] = field(default_factory=list)  # changed outside agentcli since
    not_kept: list[str] = field(default_factory=list)  # over the size cap: left as they are
    # tree -> the files as the last call that changed them left them (checked again, with
    # the workspace locked, just before writing: the person may take time to say yes)
    expected: dict[str, list[str]] = field(default_factory=dict)
    # ignore files the calls changed: what they hid from the snapshots is not taken back
    ignores_changed: list[str] = field(default_factory=list)

    @property
    def paths(self) -> list[str]:
        return [p for paths in self.sources.values() for p in paths]


def plan(snapshots: WorkspaceSnapshots, workspace: Path, calls: list[CallChange]) -> Restoration:
    """What restoring before `calls` (in the order they were recorded) involves.

    A file counts as changed outside agentcli when it is not now as the last call that
    changed it left it. Calls that ran in parallel overlap: each one's snapshots may show
    the others' changes too, which is why a file's first and last changer are what count."""
    repo = snapshots.repo(workspace)
    first: dict[str, CallChange] = {}
    last: dict[str, CallChange] = {}
    skipped = {p for call in calls for p in call.skipped}  # over the cap: never restored
    for call in calls:
        for path in repo.changed(call.before, call.after):
            if call.tool != UNDO:  # an earlier undo's restore: not a change to take back
                first.setdefault(path, call)
            last[path] = call
    now = snapshots.now(workspace)
    paths = [p for p in first if p not in skipped and p not in now.skipped]
    ignores = sorted(p for p in first if p.rsplit("/", 1)[-1] == ".gitignore")
    if not paths:
        return Restoration({}, not_kept=sorted(skipped), ignores_changed=ignores)
    expected = _grouped(paths, last, "after")
    return Restoration(
        _grouped(paths, first, "before"),
        _changed_since(repo, expected, now.tree),
        sorted(skipped),
        expected,
        ignores,
    )


def _changed_since(repo: ShadowRepo, expected: dict[str, list[str]], now: str) -> list[str]:
    """The files not as the calls left them (tree -> files) in the tree `now`."""
    outside = set()
    for after, group in expected.items():
        outside.update(repo.changed(after, now, group))
    return [p for group in expected.values() for p in group if p in outside]


def _grouped(paths: list[str], by: dict[str, CallChange], tree: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for path in paths:
        out.setdefault(getattr(by[path], tree), []).append(path)
    return out


def restore(
    snapshots: WorkspaceSnapshots,
    thread_id: str,
    workspace: Path,
    restoration: Restoration,
    force: bool,
) -> None:
    """Write the files back (refused when some changed outside agentcli, unless forced)."""
    if restoration.outside and not force:
        raise ChangedSince(restoration.outside)
    with snapshots.restoring(thread_id, workspace) as repo:
        # again, now that no call can run: the index holds the workspace as it is
        now = repo.git("write-tree").decode().strip()
        if (outside := _changed_since(repo, restoration.expected, now)) and not force:
            raise ChangedSince(outside)
        for tree, paths in restoration.sources.items():
            repo.restore(tree, paths)
