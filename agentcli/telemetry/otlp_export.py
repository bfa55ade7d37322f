"""The recorded spans and metric points handed to OpenTelemetry's SDK and sent by OTLP
(HTTP/protobuf) to the endpoints the OTEL_* variables name; the one module that imports
OpenTelemetry (pyproject's import contracts).

Every value that leaves passes the session's redactor (agent/outbound.current: the
latest session's, the same that guards the checkpoint, the logs and LangSmith traces):
span names, attribute values (strings and lists of them), event attributes, status
messages, and the resource's attributes. The SDK reads the rest of the standard variables
itself: OTEL_EXPORTER_OTLP_HEADERS, *_TIMEOUT, *_COMPRESSION, certificates, service name.

Nothing registers at exit: `finish` ends the providers in a daemon thread and waits for it
a bounded time (attach.FLUSH_S), so an unreachable collector never holds the exit longer.
The SDK's own complaints (a collector that refuses, a retry) are kept from the terminal:
`finish` says in one line that something was not sent.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from typing import Any

from opentelemetry.context import Context
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import Span as OtelSpan
from opentelemetry.trace import SpanKind, Status, StatusCode, set_span_in_context

from agentcli import __version__
from agentcli.agent.outbound import current
from agentcli.telemetry.otel_env import metrics_wanted, traces_wanted
from agentcli.telemetry.run_trace import Span

NAME = "agentcli"
# name: (kind, unit, description); docs/telemetry.md lists them
INSTRUMENTS = {
    "agentcli.review.questions": ("counter", "{call}", "Tool calls asked of a person"),
    "agentcli.review.decisions": ("counter", "{call}", "Review decisions, by decision and who"),
    "agentcli.review.wait": ("histogram", "s", "How long a question waited for its answer"),
    "agentcli.tool.calls": ("counter", "{call}", "Tool calls run, by tool, status and sandbox"),
    "gen_ai.client.token.usage": ("histogram", "{token}", "Tokens of each model request"),
}


class Exporter:
    """The SDK's tracer and meter, fed recorded spans (run_trace.Sink)."""

    def __init__(self, environ: Mapping[str, str]) -> None:
        resource = _resource()
        self.tracer_provider: Any = None
        self.meter_provider: Any = None
        self._instruments: dict[str, Any] = {}  # name: its counter's add, its histogram's record
        self.failures = _Failures()
        sdk_log = logging.getLogger("opentelemetry")
        sdk_log.propagate = False  # not on the person's terminal, mid-answer
        sdk_log.addHandler(self.failures)
        if traces_wanted(environ) and _exporter_on(environ, "OTEL_TRACES_EXPORTER"):
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

            self.tracer_provider = TracerProvider(resource=resource, shutdown_on_exit=False)
            self.tracer_provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
            self.tracer = self.tracer_provider.get_tracer(NAME, __version__)
        if metrics_wanted(environ) and _exporter_on(environ, "OTEL_METRICS_EXPORTER"):
            from opentelemetry.exporter.otlp.proto.http.metric_exporter import (
                OTLPMetricExporter,
            )
            from opentelemetry.sdk.metrics import MeterProvider
            from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader

            reader = PeriodicExportingMetricReader(OTLPMetricExporter())
            self.meter_provider = MeterProvider(
                metric_readers=[reader], resource=resource, shutdown_on_exit=False
            )
            self.meter = self.meter_provider.get_meter(NAME, __version__)

    # -- run_trace.Sink ------------------------------------------------------------------

    def span(self, span: Span) -> None:
        """An ended span: started (with its parents) if it was not, then ended."""
        if self.tracer_provider is None:
            return
        otel = self._started(span)
        otel.set_attributes(_redacted(span.attributes))
        for name, at, attributes in span.events:
            otel.add_event(redact(name), _redacted(attributes), timestamp=at)
        if span.error:
            otel.set_attribute("error.type", redact(span.error))
            otel.set_status(Status(StatusCode.ERROR, redact(span.error)))
        otel.end(end_time=span.end)

    def add(self, metric: str, value: float, attributes: dict[str, Any]) -> None:
        if self.meter_provider is None:
            return
        put = self._instruments.get(metric)
        if put is None:
            kind, unit, description = INSTRUMENTS[metric]
            if kind == "counter":
                put = self.meter.create_counter(metric, unit, description).add
            else:
                put = self.meter.create_histogram(metric, unit, description).record
            self._instruments[metric] = put
        put(value, _redacted(attributes))

    def _started(self, span: Span) -> OtelSpan:
        """The span's OpenTelemetry span, started (after its parents) when first needed:
        at its end, or its first child's."""
        if span.handle is None:
            parent = Context()  # a root is a new trace, whatever context the process has
            if span.parent is not None:
                parent = set_span_in_context(self._started(span.parent))
            chat = span.attributes.get("gen_ai.operation.name") == "chat"
            kind = SpanKind.CLIENT if chat else SpanKind.INTERNAL
            span.handle = self.tracer.start_span(
                redact(span.name), parent, kind, start_time=span.start
            )
        return span.handle

    # -- the exit ------------------------------------------------------------------------

    def finish(self, seconds: float) -> str | None:
        """Send what is left and stop, waiting at most `seconds`; a line for the person
        when not all was sent."""
        done = threading.Event()

        def shut() -> None:
            try:
                for provider in (self.tracer_provider, self.meter_provider):
                    if provider is not None:
                        provider.shutdown()
            except Exception:  # the exporter's own failure: counted below
                self.failures.count += 1
            finally:
                done.set()

        threading.Thread(target=shut, name="agentcli-telemetry-flush", daemon=True).start()
        if not done.wait(seconds):
            return (
                f"telemetry: the OpenTelemetry collector did not take the last spans and"
                f" metrics within {seconds:.0f} s; they are dropped"
            )
        if self.failures.count:
            return (
                "telemetry: some spans or metrics could not be sent to the OpenTelemetry"
                f" collector (the last problem: {self.failures.last})"
            )
        return None


class _Failures(logging.Handler):
    """Counts the SDK's warnings and errors (failed or retried exports), keeps the last."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count, self.last = 0, ""

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1
        self.last = " ".join(record.getMessage().split())[:160]


def redact(text: str) -> str:
    return current()(text)


def _redacted(attributes: Mapping[str, Any]) -> dict[str, Any]:
    """Attribute values with every string (alone or in a list) redacted."""
    out: dict[str, Any] = {}
    for key, value in attributes.items():
        if isinstance(value, str):
            value = redact(value)
        elif isinstance(value, list | tuple):
            value = [redact(v) if isinstance(v, str) else v for v in value]
        out[redact(key)] = value
    return out


def _resource() -> Resource:
    """OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES as the SDK reads them (service.name
    "agentcli" when they give none), each value redacted."""
    resource = Resource.create()
    if str(resource.attributes.get(SERVICE_NAME, "")).startswith("unknown_service"):
        resource = resource.merge(Resource({SERVICE_NAME: NAME}))
    return Resource(_redacted(resource.attributes), resource.schema_url)


def _exporter_on(environ: Mapping[str, str], variable: str) -> bool:
    """OTEL_TRACES_EXPORTER / OTEL_METRICS_EXPORTER = none turns that signal off."""
    return environ.get(variable, "otlp").strip().lower() != "none"
