"""What the command line calls: `watch` a session when the person set an OTLP endpoint,
and `finish` at the exit (any exit: a result, an error, Ctrl-C, a stop signal).

Reading the variables costs nothing; OpenTelemetry is imported only when an endpoint is
set and the otel extra is installed, and then in a thread of its own (`Starting`): about
0.15 s of CPU that the model's first request does not wait for. Set but not installed: one
line, once.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Mapping
from typing import Any

from agentcli.telemetry.otel_env import installed, wanted
from agentcli.telemetry.run_trace import RunTrace

NOT_INSTALLED = (
    "an OpenTelemetry endpoint is set (OTEL_EXPORTER_OTLP_ENDPOINT) but agentcli's otel extra"
    " is not installed: nothing is sent (pip install 'agentcli[otel]')"
)
FLUSH_S = 2.0  # the longest the exit waits for the last spans and points to be sent

_exporter: Any = None
_traces: list[RunTrace] = []
_said: set[str] = set()  # each line once in a process


def watch(session: Any) -> str | None:
    """Trace `session`'s runs if the OTEL_* variables ask for it; a line for the person
    when they ask for what cannot be done (the extra missing). A session on a LangGraph
    server is traced here too, from the server's stream (session/remote.py)."""
    global _exporter
    if not wanted(os.environ):
        return None
    if not installed():
        return _once(NOT_INSTALLED)
    if _exporter is None:
        _exporter = Starting(os.environ)
    trace = RunTrace(_exporter, str(session.settings.model))
    session.watch(trace)
    _traces.append(trace)
    return None


def finish(exit_code: int | None = None) -> str | None:
    """The process exits: end what is open, send what is left (a bounded wait); a line
    for the person when not all of it was sent."""
    global _exporter
    exporter, _exporter = _exporter, None
    if exporter is None:
        return None
    for trace in _traces:
        trace.close(exit_code)
    _traces.clear()
    return exporter.finish()


class Starting:
    """The exporter, made in a background thread while the session starts; what is
    recorded before it is ready waits for it (run_trace.Sink)."""

    def __init__(self, environ: Mapping[str, str]) -> None:
        self._exporter: Any = None
        self._thread = threading.Thread(
            target=self._make, args=(dict(environ),), name="agentcli-telemetry", daemon=True
        )
        self._thread.start()

    def _make(self, environ: dict[str, str]) -> None:
        try:
            from agentcli.telemetry.otlp_export import Exporter

            self._exporter = Exporter(environ)
        except Exception:  # a broken install: the run goes on, untraced
            logging.getLogger(__name__).debug("telemetry not started", exc_info=True)

    def _ready(self, seconds: float | None = None) -> Any:
        self._thread.join(seconds)
        return self._exporter

    def span(self, span: Any) -> None:
        if (exporter := self._ready()) is not None:
            exporter.span(span)

    def add(self, metric: str, value: float, attributes: dict[str, Any]) -> None:
        if (exporter := self._ready()) is not None:
            exporter.add(metric, value, attributes)

    def finish(self) -> str | None:
        """Send what is left: FLUSH_S at most, from now, whatever the collector does."""
        deadline = time.monotonic() + FLUSH_S
        if (exporter := self._ready(FLUSH_S)) is None:
            return None
        said = exporter.finish(max(deadline - time.monotonic(), 0.1))
        return str(said) if said else None


def _once(line: str) -> str | None:
    if line in _said:
        return None
    _said.add(line)
    return line
