"""What a tool may know about the run it is part of.

Tools receive this through LangGraph's runtime injection (``ToolRuntime.context``),
never from the model. The application's run context extends it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass
class ToolContext:
    """Runtime values the built-in tools read: never shown to the model."""

    workspace: Path
    shell_timeout: float = 120.0
    max_output_chars: int = 30_000
    allow_private_urls: bool = False
    # why fetch_url must not request a URL, or None: url_check(first_url, url) is asked for
    # the first URL and every redirect hop (agentcli fills it from the approval policy).
    # Typed Any, as LangGraph Server builds a JSON schema of the context and a callable has none.
    url_check: Any = None
    # a threading.Event set when the person interrupts the run (Ctrl-C): long tools stop
    cancel: Any = None
    # globs of workspace-relative paths the person's deny and ask rules protect (matched by
    # tools.paths.path_matches): tools that read files beyond their argument, as
    # search_files does, skip them
    protected_paths: tuple[str, ...] = ()
    # environment variables (names or globs) tool processes get beyond the minimal set, and
    # those they never get (tools.environment.tool_environment)
    env_passthrough: tuple[str, ...] = ()
    env_never: tuple[str, ...] = ("AGENTCLI_*",)
    # replaces the session's secrets in tool output (a tools.redaction.Redactor); None: nothing
    # to hide. Typed Any, as LangGraph Server builds a JSON schema of the context.
    redactor: Any = None
    # told (pid, start time) of the process that supervises a command before the command
    # starts (tools.supervised); the application records it per call, to end that run if
    # it is still alive when the call is offered again. Typed Any, as for url_check.
    on_process: Any = None
