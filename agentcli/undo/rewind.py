"""Putting back what a run of calls changed: which files, to what content and mode, and
which of them were changed outside agentcli since (those are not overwritten unless
forced). A file or folder whose mode alone changed (`chmod`) is put back too: git does not
see it, the snapshots' mode maps do (file_modes.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from agentcli.errors import AgentcliError
from agentcli.undo.call_snapshots import UNDO, CallChange, WorkspaceSnapshots
from agentcli.undo.file_modes import Modes, ModesPutBack, changed_modes, modes_now, put_back
from agentcli.undo.shadow_git import ShadowRepo


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
    # the files and folders ("folder/") to give back their modes: path -> mode before, and
    # those whose mode alone changed -> the mode the last call left (checked again)
    modes: Modes = field(default_factory=dict)
    modes_left: Modes = field(default_factory=dict)
    modes_unknown: bool = False  # some calls were recorded before snapshots kept modes
    done: ModesPutBack = field(default_factory=ModesPutBack)  # what restore did with them

    @property
    def paths(self) -> list[str]:
        return [p for paths in self.sources.values() for p in paths]

    @property
    def mode_changes(self) -> list[str]:
        """The files and folders whose mode alone is put back."""
        return [p.rstrip("/") for p in self.modes_left]


def plan(snapshots: WorkspaceSnapshots, workspace: Path, calls: list[CallChange]) -> Restoration:
    """What restoring before `calls` (in the order they were recorded) involves.

    A file counts as changed outside agentcli when it is not now as the last call that
    changed it left it. Calls that ran in parallel overlap: each one's snapshots may show
    the others' changes too, which is why a file's first and last changer are what count."""
    repo = snapshots.repo(workspace)
    first: dict[str, CallChange] = {}
    last: dict[str, CallChange] = {}
    moded: dict[str, tuple[CallChange, CallChange]] = {}  # mode alone: first, last changer
    skipped = {p for call in calls for p in call.skipped}  # over the cap: never restored
    maps = _Maps(repo)
    for call in calls:
        for path in repo.changed(call.before, call.after):
            if call.tool != UNDO:  # an earlier undo's restore: not a change to take back
                first.setdefault(path, call)
            last[path] = call
        for path in changed_modes(maps.get(call.modes_before), maps.get(call.modes_after)):
            if path in moded:
                moded[path] = (moded[path][0], call)
            elif call.tool != UNDO:
                moded[path] = (call, call)
    now = snapshots.now(workspace)
    paths = [p for p in first if p not in skipped and p not in now.skipped]
    ignores = sorted(p for p in first if p.rsplit("/", 1)[-1] == ".gitignore")
    modes, left = _modes(maps, paths, first, moded, skipped, maps.get(now.modes))
    unknown = any(not c.modes_before for c in calls if c.tool != UNDO)
    if not paths and not left:
        return Restoration({}, not_kept=sorted(skipped), ignores_changed=ignores)
    expected = _grouped(paths, last, "after")
    outside = _changed_since(repo, expected, now.tree)
    outside += [p.rstrip("/") for p, mode in left.items() if maps.get(now.modes).get(p) != mode]
    return Restoration(
        _grouped(paths, first, "before"),
        outside,
        sorted(skipped),
        expected,
        ignores,
        modes,
        left,
        unknown,
    )


class _Maps:
    """The snapshots' mode maps, each read once."""

    def __init__(self, repo: ShadowRepo) -> None:
        self.repo = repo
        self.read: dict[str, Modes] = {}

    def get(self, blob: str) -> Modes:
        if blob not in self.read:
            self.read[blob] = self.repo.modes(blob) or {}
        return self.read[blob]


def _modes(
    maps: _Maps,
    paths: list[str],
    first: dict[str, CallChange],
    moded: dict[str, tuple[CallChange, CallChange]],
    skipped: set[str],
    now: Modes,
) -> tuple[Modes, Modes]:
    """The modes to put back (path -> mode before its first changer), and of those the
    files and folders whose mode alone changed (path -> mode its last changer left).

    A file git writes back gets the mode it had, and so does each folder above it that git
    makes anew (one the calls removed); a folder that is there keeps its mode unless a
    call changed it."""
    modes: Modes = {}
    for path in paths:
        kept = maps.get(first[path].modes_before)
        if (mode := kept.get(path)) is not None:
            modes[path] = mode
        folder = path.rpartition("/")[0]
        while folder and f"{folder}/" not in now and f"{folder}/" in kept:
            modes[f"{folder}/"] = kept[f"{folder}/"]
            folder = folder.rpartition("/")[0]
    left: Modes = {}
    for path, (earliest, latest) in moded.items():
        if path in modes or path.rstrip("/") in skipped:
            continue
        was = maps.get(earliest.modes_before).get(path)
        now_left = maps.get(latest.modes_after).get(path)
        if was is not None and now_left is not None and was != now_left:
            modes[path], left[path] = was, now_left
    return modes, left


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
        outside = _changed_since(repo, restoration.expected, now)
        current = modes_now(workspace, restoration.modes_left)
        left = restoration.modes_left.items()
        outside += [p.rstrip("/") for p, mode in left if current.get(p) != mode]
        if outside and not force:
            raise ChangedSince(outside)
        for tree, paths in restoration.sources.items():
            repo.restore(tree, paths)
        restoration.done = put_back(workspace, restoration.modes)
