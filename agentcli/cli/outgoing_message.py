"""What a chat message carries to the model besides what was typed: the files its `@path`s
name (each said to be attached) and the output of the `!command`s run since the last one."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from agentcli.ui.safe_text import styled

if TYPE_CHECKING:
    from rich.console import Console

    from agentcli.cli.bang_command import ShellRun


def outgoing(console: Console, text: str, workspace: Path, shell_runs: list[ShellRun]) -> str:
    """`text` as it goes to the model; an `@path` that cannot be read is a UsageError."""
    from agentcli.session.attachments import MAX_BYTES, attach

    text, files, unknown = attach(text, workspace)
    for found in files:
        cut = f", cut to its first {MAX_BYTES:,}" if found.cut else ""
        console.print(styled((f"attached {found.rel} ({found.size:,} bytes{cut})", "dim")))
    for note in unknown:  # `@word: why`
        console.print(styled((f"{note}: nothing attached (sent as typed)", "yellow")))
    if shell_runs:
        text += "\n\n" + "\n\n".join(ran.for_model() for ran in shell_runs)
    return text
