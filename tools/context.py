"""What a tool may know about the run it is part of.

Tools receive this through LangGraph's runtime injection (``ToolRuntime.context``),
never from the model. The application's run context extends it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tools.redaction import Redactor


@dataclass
class ToolContext:
    """Runtime values the built-in tools read: never shown to the model."""

    workspace: Path
    shell_timeout: float = 120.0
    max_output_chars: int = 30_000
    allow_private_urls: bool = False
    # a threading.Event set when the person interrupts the run (Ctrl-C): long tools stop
    cancel: Any = None
    # environment variables (names or globs) tool processes get beyond the minimal set, and
    # those they never get (tools.environment.tool_environment)
    env_passthrough: tuple[str, ...] = ()
    env_never: tuple[str, ...] = ("AGENTCLI_*",)
    # replaces the session's secrets in tool output (tools.redaction); None: nothing to hide
    redactor: Redactor | None = None
