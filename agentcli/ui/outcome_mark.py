"""How a call ended, as the chat and `threads show` mark it: `✓` green, or `✗` red when its
tool message says it failed (status "error": a tool error, a command that exited non-zero,
timed out or was killed, a call that did not run)."""

from __future__ import annotations

from rich.text import Text


def outcome_style(status: str | None) -> str:
    return "red" if status == "error" else "green"


def outcome_mark(status: str | None) -> Text:
    return Text("✗" if status == "error" else "✓", style=outcome_style(status))
