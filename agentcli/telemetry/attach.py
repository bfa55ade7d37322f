"""What the command line calls: `watch` a session when the person set an OTLP endpoint,
and `finish` at the exit (any exit: a result, an error, Ctrl-C, a stop signal).

Reading the variables costs nothing; OpenTelemetry is imported only when an endpoint is
set and the otel extra is installed. Set but not installed: one line, once.
"""

from __future__ import annotations

import os
from typing import Any

from agentcli.telemetry.otel_env import installed, wanted
from agentcli.telemetry.run_trace import RunTrace

NOT_INSTALLED = (
    "an OpenTelemetry endpoint is set (OTEL_EXPORTER_OTLP_ENDPOINT) but agentcli's otel extra"
    " is not installed: nothing is sent (pip install 'agentcli[otel]')"
)
ON_SERVER = "telemetry: a run on a LangGraph server is not traced here (the server runs it)"

_exporter: Any = None
_traces: list[RunTrace] = []
_said: set[str] = set()  # each line once in a process


def watch(session: Any) -> str | None:
    """Trace `session`'s runs if the OTEL_* variables ask for it; a line for the person
    when they ask for what cannot be done (the extra missing, a server's session)."""
    global _exporter
    if not wanted(os.environ):
        return None
    if not installed():
        return _once(NOT_INSTALLED)
    if not hasattr(session, "watch"):  # a RemoteSession: the server's runs
        return _once(ON_SERVER)
    if _exporter is None:
        from agentcli.telemetry.otlp_export import Exporter

        _exporter = Exporter(os.environ)
    trace = RunTrace(_exporter, str(session.settings.model))
    session.watch(trace)
    _traces.append(trace)
    return None


def finish(exit_code: int | None = None) -> None:
    """The process exits: end what is open, send what is left (a bounded wait)."""
    global _exporter
    exporter, _exporter = _exporter, None
    if exporter is None:
        return
    for trace in _traces:
        trace.close(exit_code)
    _traces.clear()
    exporter.finish()


def _once(line: str) -> str | None:
    if line in _said:
        return None
    _said.add(line)
    return line
