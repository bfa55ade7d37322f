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
    # Left None, fetch_url follows a redirect only on the first URL's site (same_site_only).
    # Typed Any, as LangGraph Server builds a JSON schema of the context and a callable has none.
    url_check: Any = None
    # a threading.Event set when the person interrupts the run (Ctrl-C): long tools stop
    cancel: Any = None
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
    # the confinement of the processes tools start (a tools.sandbox.Sandbox); None: they run
    # unconfined (agentcli always sets one). Typed Any, as for url_check.
    sandbox: Any = None
    # told each decision of a command's egress proxy (a tools.egress_proxy.Decision), once
    # per kind, host, port and outcome: the application audits them. Typed Any, as above.
    on_egress: Any = None
    # the person's answers for hosts the egress proxy finds not listed (a
    # tools.egress_questions.ThreadQuestions: the chat's session sets it); None: no one is
    # asked, such hosts are refused (`run`, a server). Typed Any, as above.
    egress_ask: Any = None

    def protection(self, tool: str, rel: str, typed: str | None = None) -> str | None:
        """Why ``tool`` must not open the workspace-relative path ``rel`` (where a path led when
        the tool walked it), or None. ``typed`` is the path the call named (normalised as
        tools/typed_paths.py typed_relative does), whose own rules the review already applied.

        File tools ask this after their walk, so a path that led elsewhere when it was reviewed
        (a link changed since) is refused, and search_files and list_dir skip what it names.
        A plain ToolContext protects nothing; the application's run context asks its approval
        policy (agentcli.agent.state.RunContext).
        """
        return None

    def cancelled(self) -> bool:
        """Whether the person interrupted the run: long loops stop when it is true."""
        return self.cancel is not None and bool(self.cancel.is_set())
