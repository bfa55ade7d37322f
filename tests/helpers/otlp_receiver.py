"""A local OTLP/HTTP receiver that decodes what it is sent with the real protobuf messages
(opentelemetry-proto's ExportTraceServiceRequest and ExportMetricsServiceRequest).

    with receiving() as otlp:
        env |= otlp.env()  # OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:PORT
        ... run agentcli ...
        spans = otlp.spans()  # every span of every request, decoded

Each POST to /v1/traces or /v1/metrics is kept as it came (the raw body, gzip undone when
the client compressed it: so a test can look for a byte string in all that left), then
parsed; a body that does not parse is an error the test sees (`bad`). It answers 200 with
the empty protobuf response, as a collector does.
"""

from __future__ import annotations

import gzip
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from typing import Any

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from tests.helpers.tooling import local_http

KINDS = {
    "/v1/traces": (ExportTraceServiceRequest, ExportTraceServiceResponse),
    "/v1/metrics": (ExportMetricsServiceRequest, ExportMetricsServiceResponse),
}


@contextmanager
def receiving(port: int = 0) -> Iterator[OtlpReceiver]:
    """A receiver on 127.0.0.1 (a free port, or `port`: OSError if it is taken)."""
    receiver = OtlpReceiver()
    with local_http(receiver.handler(), port=port) as httpd:
        receiver.url = f"http://127.0.0.1:{httpd.server_address[1]}"
        yield receiver


class OtlpReceiver:
    """What a receiver was sent (`receiving` serves it)."""

    def __init__(self) -> None:
        self.url = ""
        self.requests: list[tuple[str, bytes, Any]] = []  # (path, body, decoded)
        self.headers: list[dict[str, str]] = []
        self.bad: list[str] = []  # what could not be decoded, and why
        self._lock = threading.Lock()

    def env(self) -> dict[str, str]:
        return {"OTEL_EXPORTER_OTLP_ENDPOINT": self.url}

    def received(self) -> bytes:
        """Every body that came, one after the other."""
        with self._lock:
            return b"".join(body for _, body, _ in self.requests)

    def decoded(self, path: str) -> list[Any]:
        with self._lock:
            return [message for at, _, message in self.requests if at == path]

    def spans(self) -> list[Any]:
        return [
            span
            for request in self.decoded("/v1/traces")
            for resource in request.resource_spans
            for scope in resource.scope_spans
            for span in scope.spans
        ]

    def resources(self) -> list[dict[str, Any]]:
        return [
            attributes(resource.resource.attributes)
            for request in self.decoded("/v1/traces")
            for resource in request.resource_spans
        ]

    def metrics(self) -> Iterator[Any]:
        for request in self.decoded("/v1/metrics"):
            for resource in request.resource_metrics:
                for scope in resource.scope_metrics:
                    yield from scope.metrics

    def handler(self) -> type[BaseHTTPRequestHandler]:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                kinds = KINDS.get(self.path)
                with receiver._lock:
                    receiver.headers.append(dict(self.headers))
                    if kinds is None:
                        receiver.bad.append(f"POST to {self.path}")
                        receiver.requests.append((self.path, body, None))
                    else:
                        message = kinds[0]()
                        try:
                            message.ParseFromString(body)
                        except Exception as exc:  # the test fails on it
                            receiver.bad.append(f"{self.path}: {exc}")
                        receiver.requests.append((self.path, body, message))
                reply = kinds[1]().SerializeToString() if kinds else b""
                self.send_response(200 if kinds else 404)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

        return Handler


def value_of(any_value: Any) -> Any:
    """An OTLP AnyValue as Python: str, int, float, bool, or a list of them."""
    kind = any_value.WhichOneof("value")
    if kind == "array_value":
        return [value_of(v) for v in any_value.array_value.values]
    return getattr(any_value, kind) if kind else None


def attributes(pairs: Any) -> dict[str, Any]:
    return {pair.key: value_of(pair.value) for pair in pairs}


def points(receiver: OtlpReceiver, name: str) -> list[tuple[dict[str, Any], float, int]]:
    """The data points of metric `name` as (attributes, value, count): a sum's value and 1,
    or a histogram's sum and count."""
    found = []
    for metric in receiver.metrics():
        if metric.name != name:
            continue
        kind = metric.WhichOneof("data")
        for point in getattr(metric, kind).data_points:
            if kind == "histogram":
                found.append((attributes(point.attributes), point.sum, point.count))
            else:
                value = point.as_int if point.WhichOneof("value") == "as_int" else point.as_double
                found.append((attributes(point.attributes), value, 1))
    return found
