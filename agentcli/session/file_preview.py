"""A file a call would change, read as its tool would read it: what a review (the terminal's
diff, an ACP editor's) shows the call against."""

from __future__ import annotations

from pathlib import Path

MAX_PREVIEW_BYTES = 5_000_000  # a bigger file is shown as arguments, not as a diff


def current_text(workspace: Path, path: str) -> tuple[str, str] | None:
    """The file as the tool would read it (the same walk beneath the workspace, the same
    refusals) and where the path leads, relative to the workspace: "" if it does not exist
    yet, None if the tool would refuse it or it is not UTF-8 text small enough to show."""
    from agentcli_tools.fileio import open_regular, read_all
    from agentcli_tools.paths import locate

    try:
        with locate(workspace, path) as found:
            if not found.exists:
                return "", found.rel
            with open_regular(found) as (fd, _):
                text = read_all(fd, MAX_PREVIEW_BYTES, found.rel).decode("utf-8")
                return text, found.rel
    except Exception:  # outside the workspace, unreadable: the tool will say so; show the args
        return None


def edited_text(old: str, old_text: str, new_text: str) -> str | None:
    """The file after edit_file replaces `old_text` (found exactly once) with `new_text`;
    None when the tool would refuse the edit (not found, found twice, empty)."""
    if not old_text or old.count(old_text) != 1:
        return None
    return old.replace(old_text, new_text, 1)
