"""The snapshots the tools node takes around a call, and what the review says about undo."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from langchain_core.messages import ToolCall

from agentcli.agent.toolset.sandboxing import would_confine
from agentcli.errors import SnapshotError
from agentcli.snapshots.call_snapshots import READ_ONLY_TOOLS
from agentcli.snapshots.undo_limits import FILE_TOOLS, undo_limit


@contextmanager
def snapshotted(
    ctx: Any, thread_id: str, call: ToolCall, checkpoint: str | None = None
) -> Iterator[list[str]]:
    """Run the body (the call) between two snapshots of the workspace, when the call may
    change files. Yields a list that holds why, if the snapshots could not be taken: the
    call runs all the same (it was approved), and its result says it cannot be undone."""
    snapshots = getattr(ctx, "snapshots", None)
    problems: list[str] = []
    if snapshots is None or call["name"] in READ_ONLY_TOOLS:
        yield problems
        return
    args = call["args"] if isinstance(call.get("args"), dict) else {}
    # a file tool changes its path only; any other tool may change any file
    paths = [str(args.get("path", ""))] if call["name"] in FILE_TOOLS else None
    around = snapshots.around(
        thread_id, Path(ctx.workspace), str(call["id"]), call["name"], checkpoint, paths
    )
    try:
        around.__enter__()
    except SnapshotError as exc:
        problems.append(str(exc))
        yield problems
        return
    try:
        yield problems
    finally:
        try:
            around.__exit__(None, None, None)
        except SnapshotError as exc:
            problems.append(str(exc))


def review_note(ctx: Any, call: ToolCall) -> str | None:
    """What the review shows when this call's changes could not all be undone."""
    args = call["args"] if isinstance(call.get("args"), dict) else {}
    return undo_limit(
        getattr(ctx, "snapshots", None),
        Path(ctx.workspace),
        call["name"],
        args,
        would_confine(ctx, call["name"]),
        tuple(getattr(getattr(ctx, "sandbox", None), "writable", ()) or ()),
    )
