"""What the standard OTEL_* variables ask for, read without importing OpenTelemetry: the
SDK reads them itself (the endpoints, headers, service name, resource attributes, timeouts)
once it is loaded; here only whether to load it at all."""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping

ENDPOINTS = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
METRICS_ENDPOINT = "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"
DISABLED = "OTEL_SDK_DISABLED"
# what `pip install 'agentcli[otel]'` brings: the SDK and the OTLP HTTP/protobuf exporter
PACKAGES = ("opentelemetry.sdk", "opentelemetry.exporter.otlp.proto.http")


def wanted(environ: Mapping[str, str]) -> bool:
    """Whether the person asked for telemetry: an OTLP endpoint is set (for all signals,
    traces or metrics) and the SDK is not disabled (OTEL_SDK_DISABLED=true)."""
    if environ.get(DISABLED, "").strip().lower() == "true":
        return False
    return any(environ.get(name, "").strip() for name in (*ENDPOINTS, METRICS_ENDPOINT))


def traces_wanted(environ: Mapping[str, str]) -> bool:
    return any(environ.get(name, "").strip() for name in ENDPOINTS)


def metrics_wanted(environ: Mapping[str, str]) -> bool:
    return any(environ.get(name, "").strip() for name in (ENDPOINTS[0], METRICS_ENDPOINT))


def installed() -> bool:
    """Whether the otel extra is installed (finding it imports only the namespace
    packages `opentelemetry` and `opentelemetry.exporter`...: asked once an endpoint is set)."""
    try:
        return all(importlib.util.find_spec(name) is not None for name in PACKAGES)
    except (ImportError, ValueError):
        return False
