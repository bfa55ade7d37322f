"""The snapshots taken around each group of approved calls that may change files, and
reading them back.

The executor (agent/executor.py) runs the calls of a turn and the tasks of a plan in
groups, the calls of a group side by side. Before a group that may change files runs, the
workspace is snapshotted; after it, again, and a commit in the store records the group:
its tree is the workspace after it, its message (JSON) names the thread, the group's calls
and tools, the tree before, the files not kept, the files the calls may have changed that
no snapshot holds (ignored ones, git's own), and the blobs of the files' and folders'
modes before and after (file_modes.py). The calls of a group ran at the same time, so one
record holds them together: undo takes them back together. Each thread's records form a
chain under `refs/agentcli/threads/<thread id>`.
"""

from __future__ import annotations

import fcntl
import json
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentcli.config import Settings
from agentcli.errors import SnapshotError
from agentcli.undo.git_own_paths import writes_into_git
from agentcli.undo.shadow_git import ShadowRepo, Snapshot

# tools that never change a file: no snapshot around them
READ_ONLY_TOOLS = frozenset({"read_file", "list_dir", "search_files", "fetch_url", "calculator"})
UNDO = "undo"  # the call and tool of a restore's record
UNSEEN_NAMED = 20  # at most this many files a call may have changed unseen, named per record
_THREAD = re.compile(r"[A-Za-z0-9_-]{1,100}")


@dataclass
class CallChange:
    """What one group of calls changed: the workspace's tree before it and after it."""

    call_id: str  # the group's first call
    tool: str
    before: str
    after: str
    skipped: list[str] = field(default_factory=list)
    commit: str = ""
    checkpoint: str | None = None  # the thread's checkpoint the call's step started from
    # what the call may have changed that no snapshot holds (ignored files, git's own files):
    # never restored, only named
    unseen: list[str] = field(default_factory=list)
    # the blobs of the files' and folders' modes before and after ("": a record made
    # before snapshots kept modes)
    modes_before: str = ""
    modes_after: str = ""
    calls: list[str] = field(default_factory=list)  # every call of the group, in order
    group: str = ""  # which group of its batch (agent/executor.py) it records

    @property
    def changed(self) -> bool:
        """Whether the call changed a file's content or a file's or folder's mode."""
        return (self.before, self.modes_before) != (self.after, self.modes_after)


def thread_ref(thread_id: str) -> str:
    if not _THREAD.fullmatch(thread_id):
        raise SnapshotError(f"not a thread id usable for snapshots: {thread_id[:40]!r}")
    return f"refs/agentcli/threads/{thread_id}"


@dataclass
class WorkspaceSnapshots:
    """The snapshots of the workspaces a process's threads work in."""

    root: Path  # <data folder>/snapshots
    max_file_bytes: int = 10_000_000
    private: tuple[Path, ...] = ()  # agentcli's files, never snapshotted (the database)

    def repo(self, workspace: Path) -> ShadowRepo:
        return ShadowRepo(self.root, workspace, self.max_file_bytes, self.private)

    @contextmanager
    def locked(self, repo: ShadowRepo) -> Iterator[ShadowRepo]:
        """One snapshot or restore at a time per workspace, across threads and processes."""
        self.root.mkdir(parents=True, exist_ok=True, mode=0o700)
        with open(f"{repo.git_dir}.lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield repo
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def before(self, workspace: Path, paths: Sequence[str] | None = None) -> Taken:
        """The workspace snapshotted before a group of calls runs.

        `paths`: the only files the calls may change (file tools' paths), None when they
        may change any: the record names those of them that no snapshot holds (for None,
        every ignored file and folder of the workspace), which undo then says it cannot
        restore. The workspace is locked while the snapshot is taken, not while the calls
        run: calls of one group run side by side, and their record holds them together."""
        with self.locked(self.repo(workspace)) as repo:
            return Taken(repo.snapshot(), _unseen(repo, paths))

    def after(
        self,
        thread_id: str,
        workspace: Path,
        taken: Taken,
        calls: Sequence[tuple[str, str]],
        checkpoint: str | None = None,
        group: str = "",
    ) -> None:
        """Snapshot the workspace after the group `calls` ((call id, tool), in order) ran
        from `taken`, and record it on the thread. `group` names it: a record of that group
        already there (written before a crash cut off what followed) is not written again."""
        with self.locked(self.repo(workspace)) as repo:
            head = self._head(repo, thread_id) if group else None
            if head is not None and head.group == group:
                return
            after = repo.snapshot()
            self._record(
                repo, thread_id, calls, taken.snapshot, after, checkpoint, taken.unseen, group
            )

    @contextmanager
    def restoring(self, thread_id: str, workspace: Path) -> Iterator[ShadowRepo]:
        """The workspace locked for undo to write files back, the restore itself recorded
        on the thread (as tool UNDO): undo never takes the files it wrote back for changes
        made outside agentcli, and the state before it stays in the store."""
        with self.locked(self.repo(workspace)) as repo:
            before = repo.snapshot()  # the index holds the workspace as it is
            try:
                yield repo
            finally:
                after = repo.snapshot()
                if (after.tree, after.modes) != (before.tree, before.modes):  # else none written
                    self._record(repo, thread_id, [(UNDO, UNDO)], before, after)

    def _record(
        self,
        repo: ShadowRepo,
        thread_id: str,
        calls: Sequence[tuple[str, str]],
        before: Snapshot,
        after: Snapshot,
        checkpoint: str | None = None,
        unseen: Sequence[str] = (),
        group: str = "",
    ) -> None:
        ref = thread_ref(thread_id)
        message = {
            "thread": thread_id,
            "call": calls[0][0],
            "tool": calls[0][1],
            **({"calls": [list(c) for c in calls]} if len(calls) > 1 else {}),
            **({"group": group} if group else {}),
            "checkpoint": checkpoint,  # the thread's checkpoint the call's step started from
            "before": before.tree,
            "skipped": sorted(set(before.skipped) | set(after.skipped)),
            "unseen": list(unseen),
            "modes_before": before.modes,
            "modes_after": after.modes,
        }
        repo.set_ref(ref, repo.commit(after.tree, repo.ref(ref), json.dumps(message)))

    def now(self, workspace: Path) -> Snapshot:
        with self.locked(self.repo(workspace)) as repo:
            return repo.snapshot()

    def changes(self, thread_id: str, workspace: Path) -> list[CallChange]:
        """Every group of calls recorded for the thread, oldest first."""
        repo = self.repo(workspace)
        if not (repo.git_dir / "HEAD").is_file():
            return []
        ref = thread_ref(thread_id)
        if repo.ref(ref) is None:
            return []
        out = repo.git("log", "--format=%H%x1f%T%x1f%B%x1e", ref).decode("utf-8", "replace")
        found = [c for entry in out.split("\x1e") if (c := _change(entry)) is not None]
        return found[::-1]

    def _head(self, repo: ShadowRepo, thread_id: str) -> CallChange | None:
        """The thread's last record."""
        if repo.ref(thread_ref(thread_id)) is None:
            return None
        out = repo.git("log", "-1", "--format=%H%x1f%T%x1f%B", thread_ref(thread_id))
        return _change(out.decode("utf-8", "replace"))

    def forget(self, thread_id: str, workspace: Path) -> None:
        """Drop a deleted thread's records (git prunes their objects when it collects)."""
        repo = self.repo(workspace)
        if (repo.git_dir / "HEAD").is_file() and repo.ref(thread_ref(thread_id)):
            repo.git("update-ref", "-d", thread_ref(thread_id))

    def share(self, target: str, workspace: Path, head: str | None) -> None:
        """A forked thread starts with the records of the calls it holds: its source's up
        to `head` (a commit of the source's chain; None: none)."""
        repo = self.repo(workspace)
        if head is not None and (repo.git_dir / "HEAD").is_file():
            repo.set_ref(thread_ref(target), head)


@dataclass(frozen=True)
class Taken:
    """The snapshot before a group of calls, and what they may change that it does not hold."""

    snapshot: Snapshot
    unseen: list[str]

    def saved(self) -> dict[str, Any]:
        """As kept in the executor's state until the group has run."""
        shot = self.snapshot
        return {
            "tree": shot.tree,
            "skipped": shot.skipped,
            "modes": shot.modes,
            "unseen": self.unseen,
        }

    @classmethod
    def read(cls, saved: Any) -> Taken | None:
        """What `saved` made (None: not that shape)."""
        if not isinstance(saved, dict) or not isinstance(saved.get("tree"), str):
            return None
        lists = [saved.get("skipped"), saved.get("unseen")]
        if not all(isinstance(x, list) and all(isinstance(p, str) for p in x) for x in lists):
            return None
        snapshot = Snapshot(saved["tree"], list(saved["skipped"]), str(saved.get("modes") or ""))
        return cls(snapshot, list(saved["unseen"]))


def _change(entry: str) -> CallChange | None:
    """One record read back (None: not a record of ours)."""
    parts = entry.strip("\n").split("\x1f")
    if len(parts) != 3:
        return None
    commit, tree, body = parts
    try:
        meta = json.loads(body)
        return CallChange(
            str(meta["call"]),
            str(meta["tool"]),
            str(meta["before"]),
            tree,
            [str(p) for p in meta.get("skipped", [])],
            commit,
            str(meta["checkpoint"]) if meta.get("checkpoint") else None,
            [str(p) for p in meta.get("unseen", [])],
            str(meta.get("modes_before") or ""),
            str(meta.get("modes_after") or ""),
            [str(c[0]) for c in meta.get("calls") or [[meta["call"]]]],
            str(meta.get("group") or ""),
        )
    except (ValueError, KeyError, TypeError, IndexError):
        return None


def _unseen(repo: ShadowRepo, paths: Sequence[str] | None) -> list[str]:
    """The files a call may change that no snapshot holds: of `paths`, those ignored or
    inside a .git folder; for None (any file), the workspace's ignored files and folders
    (at most UNSEEN_NAMED, then "..."). A snapshot's own limits (a file over the cap, a
    repository of its own) are its `skipped`."""
    if paths is None:
        found = repo.ignored_entries()
        return found[:UNSEEN_NAMED] + (["..."] if len(found) > UNSEEN_NAMED else [])
    unseen = [p for p in paths if writes_into_git(repo.workspace, p) or repo.ignored(p)]
    return unseen[:UNSEEN_NAMED]


def snapshots_of(settings: Settings) -> WorkspaceSnapshots | None:
    """The snapshots the settings ask for (None: `[undo] snapshots = false`)."""
    if not settings.undo_snapshots:
        return None
    database = () if settings.db_url else (settings.db_path,)
    private = tuple(
        Path(f"{db}{end}") for db in database for end in ("", "-wal", "-shm", "-journal")
    )
    return WorkspaceSnapshots(
        settings.snapshots_dir, int(settings.undo_max_file_mb * 1_000_000), private
    )
