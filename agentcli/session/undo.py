"""Undo: the files the agent's calls changed since before user message N put back, and the
thread rewound to before that message (a fork: the thread it came from stays whole).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from agentcli.config import Settings
from agentcli.errors import UsageError
from agentcli.session import history
from agentcli.session.agent_changes import changes_by_turn
from agentcli.session.outside_changes import outside_changes
from agentcli.thread_rows import ThreadRow, new_thread_id
from agentcli.threads.store import Store
from agentcli.undo.call_snapshots import (
    UNDO,
    CallChange,
    WorkspaceSnapshots,
    snapshots_of,
    thread_ref,
)
from agentcli.undo.file_modes import ModesPutBack
from agentcli.undo.rewind import ChangedSince, Restoration, plan, restore


@dataclass
class UndoPlan:
    row: ThreadRow
    turn: int  # back to before this user message
    calls: list[CallChange]  # the snapshotted calls of that turn and later ones
    restoration: Restoration | None  # None: those calls changed no file
    kept: str | None = None  # the last record of the calls before that turn (a fork's)
    outside: list[str] = field(default_factory=list)  # outside_changes.py: not restored
    snapshots: WorkspaceSnapshots | None = None  # None: the files are left as they are

    @property
    def unseen(self) -> list[str]:
        """What those calls may have changed that no snapshot holds (ignored files, files
        inside a .git folder): never restored."""
        return list(dict.fromkeys(p for c in self.calls if c.tool != UNDO for p in c.unseen))


def restored_together(undo: UndoPlan, done: bool = True) -> list[str]:
    """A line for each group of calls that ran side by side and changed files: one snapshot
    holds their changes, so they are taken back together (`done`: said after the undo,
    else before it is asked for)."""
    said = "restored together" if done else "to be restored together"
    return [
        f"{said} (these calls ran side by side): {_shown(c.calls)}"
        for c in undo.calls
        if c.tool != UNDO and len(c.calls) > 1 and c.changed
    ]


def left_as_they_are(undo: UndoPlan) -> list[str]:
    """What restoring the files leaves as it is, a line each: files the snapshots did not
    keep, files an ignore file the agent changed hid from them, and files the calls may
    have changed that no snapshot holds."""
    out = []
    restoration = undo.restoration
    if restoration is not None and restoration.not_kept:
        out.append(
            "not kept (over the size limit, a repository of its own, or a name git will not"
            f" store), left as they are: {_shown(restoration.not_kept)}"
        )
    if restoration is not None and restoration.ignores_changed:
        out.append(
            f"the agent changed {', '.join(restoration.ignores_changed)}: files it made"
            " ignored were not in the snapshots and are left as they are"
        )
    if restoration is not None and restoration.modes_unknown:
        out.append(
            "some calls were recorded before snapshots kept modes: the files they changed"
            " keep the permissions they have now"
        )
    if unseen := undo.unseen:
        out.append(
            "ignored files and files inside .git folders may have changed and are not"
            f" restored (the snapshots keep no copy of them): {_shown(unseen)}"
        )
    return [*out, *undo.outside]


def changed_since(undo: UndoPlan, force: bool) -> list[str]:
    """The files to restore that changed outside agentcli since its snapshot: refused
    (ChangedSince) before anything is asked or done, unless `force` overwrites them."""
    outside = undo.restoration.outside if undo.restoration is not None else []
    if outside and not force:
        raise ChangedSince(outside)
    return outside


def modes_done(done: ModesPutBack) -> list[str]:
    """What undo did with the files' and folders' modes: a line of those put back, and a
    line for each it could not put back (or put back without its setuid bit)."""
    out = [f"mode not put back: {why}" for why in done.refused]
    if done.put_back:
        out.insert(0, f"modes put back ({len(done.put_back)}): {_shown(done.put_back)}")
    return out


def _shown(paths: list[str], most: int = 20) -> str:
    more = f" and {len(paths) - most} more" if len(paths) > most else ""
    return ", ".join(paths[:most]) + more


def plan_undo(
    store: Store, settings: Settings, row: ThreadRow, to: int | None, files: bool = True
) -> UndoPlan:
    """What undoing back to before user message `to` (default: the last) involves; with
    `files` false, or no snapshots kept ([undo] snapshots), the files stay as they are."""
    snapshots = snapshots_of(settings) if files else None
    count = len(history.turns(store, row.thread_id))
    if count == 0:
        raise UsageError(f"nothing to undo: thread {row.thread_id} has no message yet")
    turn = count if to is None else to
    if not 1 <= turn <= count:
        raise UsageError(
            f"no message {turn}: thread {row.thread_id} has messages 1 to {count}"
            f" (agentcli threads history {row.thread_id})"
        )
    messages = history.values(store, row.thread_id).get("messages", [])
    outside = outside_changes(messages, turn, Path(row.workspace))
    if snapshots is None:
        return UndoPlan(row, turn, [], None, outside=outside)
    recorded = changes_by_turn(snapshots, row, messages)
    calls = [c for t, c in recorded if t >= turn]
    kept = [c.commit for t, c in recorded if t < turn]
    changed = [c for c in calls if c.changed and c.tool != UNDO]
    restoration = plan(snapshots, Path(row.workspace), calls) if changed else None
    return UndoPlan(row, turn, calls, restoration, kept[-1] if kept else None, outside, snapshots)


def apply_undo(
    store: Store,
    undo: UndoPlan,
    files: bool = True,
    conversation: bool = True,
    force: bool = False,
    why: str = "undo",
) -> ThreadRow:
    """Restore the files and/or rewind the conversation; the thread to go on with (a fork
    titled for `why` it was made, history.fork_title)."""
    snapshots = undo.snapshots
    restoration = undo.restoration if files else None
    if restoration is not None and snapshots is not None:
        restore(snapshots, undo.row.thread_id, Path(undo.row.workspace), restoration, force)
    if not conversation:
        if restoration is not None and (restoration.paths or restoration.mode_changes):
            store.update(undo.row.thread_id, note=restored_note(undo, restoration))
        return undo.row
    fork = history.fork(store, undo.row, new_thread_id(), undo.turn, why)
    if snapshots is not None:
        snapshots.share(fork.thread_id, Path(undo.row.workspace), undo.kept)
    return fork


def fork_thread(store: Store, settings: Settings, row: ThreadRow, at: int | None) -> ThreadRow:
    """`threads fork`: a new thread from `row` (before user message `at`, if given) that
    keeps the snapshot records of the calls it holds, so undo works on it too."""
    snapshots = snapshots_of(settings)
    if at is None or snapshots is None:
        fork = history.fork(store, row, new_thread_id(), at, "fork")
        if snapshots is not None:
            head = snapshots.repo(Path(row.workspace)).ref(thread_ref(row.thread_id))
            snapshots.share(fork.thread_id, Path(row.workspace), head)
        return fork
    undo = plan_undo(store, settings, row, at)
    return apply_undo(store, undo, files=False, why="fork")


def forget_snapshots(settings: Settings, row: ThreadRow) -> None:
    """A deleted thread's snapshot records go with it (the states other threads share stay)."""
    if (snapshots := snapshots_of(settings)) is not None:
        snapshots.forget(row.thread_id, Path(row.workspace))


def restored_note(undo: UndoPlan, restoration: Restoration) -> str:
    """What the model is told with the next message when only the files were restored."""
    paths = list(dict.fromkeys([*restoration.paths, *restoration.mode_changes]))
    listed = "\n".join(f"- {p}" for p in paths[:50])
    more = f"\n- ... and {len(paths) - 50} more" if len(paths) > 50 else ""
    unseen = (
        f"\nNot restored (no snapshot holds them), they may have changed: {_shown(undo.unseen)}"
        if undo.unseen
        else ""
    )
    return (
        f"The person restored the workspace files changed since before their message"
        f" {undo.turn} to how they were then; the conversation was kept. Files restored:\n"
        f"{listed}{more}{unseen}"
    )
