"""What the agent's calls changed in the workspace, read from the snapshots taken around
them: by turn (undo, `agentcli diff`) and by call (`threads show`).

The calls of each turn come from the thread's messages; each is matched, in order, to the
snapshots recorded around it (undo/call_snapshots.py). Matching in order, not by id
alone, keeps turns apart on servers that give every turn's first call the same id.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentcli.agent.plan.plan_tool import task_call_ids
from agentcli.config import Settings
from agentcli.errors import UsageError
from agentcli.thread_rows import ThreadRow
from agentcli.undo.call_snapshots import UNDO, CallChange, WorkspaceSnapshots, snapshots_of

AFTER_ALL = 1 << 30  # the turn given to an undo's record: later than any message


def call_turns(messages: list[Any]) -> list[tuple[str, int]]:
    """Each tool call of the model's, in order, with the number of the user message it
    answers (1 for calls made after the first user message); a plan's tasks stand for its
    call (their snapshots carry the tasks' ids, agent/plan/)."""
    turn, found = 0, []
    for message in messages:
        if message.type == "human":
            turn += 1
        for call in getattr(message, "tool_calls", None) or []:
            found += [(call_id, turn) for call_id in task_call_ids(call)]
    return found


def changes_by_turn(
    snapshots: WorkspaceSnapshots, row: ThreadRow, messages: list[Any]
) -> list[tuple[int, CallChange]]:
    """The thread's snapshotted groups of calls, oldest first, each with its turn.

    Each record is matched to the earliest call of the messages with its (first) id not
    matched yet, and the other calls of its group with it: records come turn by turn, and
    some servers give every turn's first call the same id."""
    calls = call_turns(messages)
    unmatched: dict[str, list[int]] = {}
    for index, (call_id, _) in enumerate(calls):
        unmatched.setdefault(call_id, []).append(index)
    found = []
    for change in snapshots.changes(row.thread_id, Path(row.workspace)):
        if change.tool == UNDO:  # an undo's restore: after every turn it took back
            found.append((AFTER_ALL, change))
        elif waiting := unmatched.get(change.call_id):
            found.append((calls[waiting.pop(0)][1], change))
            for other in change.calls[1:]:
                if more := unmatched.get(other):
                    more.pop(0)
    return found


def mark_changed_files(
    settings: Settings, row: ThreadRow, messages: list[Any], entries: list[dict[str, Any]]
) -> None:
    """Give each call of a transcript's `entries` (session/transcript.py) that changed files
    the list of them (`changed_files`), from the snapshots taken around it; none where no
    snapshots are kept or the workspace is gone."""
    snapshots = snapshots_of(settings)
    if snapshots is None or not Path(row.workspace).is_dir():
        return
    changed = _changed_files(snapshots, row, messages)
    for entry in entries:
        for call in entry.get("calls", []):
            if paths := changed.get(str(call.get("id"))):
                call["changed_files"] = paths
            for task in call.get("plan") or []:  # a plan's tasks ran under their own ids
                if paths := changed.get(f"{call.get('id')}.{task.get('id')}"):
                    task["changed_files"] = paths


def _changed_files(
    snapshots: WorkspaceSnapshots, row: ThreadRow, messages: list[Any]
) -> dict[str, list[str]]:
    """The files each snapshotted call changed, by call id (the later call wins where the
    model reused an id); the calls of a group that ran side by side each get the group's."""
    repo = snapshots.repo(Path(row.workspace))
    out: dict[str, list[str]] = {}
    for _, change in changes_by_turn(snapshots, row, messages):
        if change.tool != UNDO:
            paths = repo.changed(change.before, change.after)
            out.update({call_id: paths for call_id in change.calls or [change.call_id]})
    return out


def turn_diff(
    settings: Settings, row: ThreadRow, messages: list[Any], turn: int | None
) -> list[tuple[int, str]]:
    """The unified diff of what the calls of each turn changed (only turn `turn`, if
    given): from before the turn's first call to after its last, limited to the files
    those calls changed, so edits made by others in between are left out."""
    snapshots = snapshots_of(settings)
    if snapshots is None:
        raise UsageError("no snapshots are kept ([undo] snapshots = false)")
    if not Path(row.workspace).is_dir():
        raise UsageError(f"workspace {row.workspace} is not a directory")
    repo = snapshots.repo(Path(row.workspace))
    by_turn: dict[int, list[CallChange]] = {}
    for number, change in changes_by_turn(snapshots, row, messages):
        if (turn is None or number == turn) and change.tool != UNDO:
            by_turn.setdefault(number, []).append(change)
    diffs = []
    for number, calls in sorted(by_turn.items()):
        paths = list(dict.fromkeys(p for c in calls for p in repo.changed(c.before, c.after)))
        if text := repo.diff(calls[0].before, calls[-1].after, paths):
            diffs.append((number, text))
    return diffs
