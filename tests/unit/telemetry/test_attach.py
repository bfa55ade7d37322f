"""Whether the OTEL_* variables ask for telemetry, and what the command line is told when
they ask for what cannot be done (read without importing OpenTelemetry)."""

from __future__ import annotations

import pytest

from agentcli.telemetry import attach
from agentcli.telemetry.otel_env import metrics_wanted, traces_wanted, wanted

URL = "http://127.0.0.1:4318"


@pytest.mark.parametrize(
    ("environ", "traces", "metrics"),
    [
        ({}, False, False),
        ({"OTEL_SERVICE_NAME": "x", "OTEL_EXPORTER_OTLP_HEADERS": "k=v"}, False, False),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": URL}, True, True),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "  "}, False, False),
        ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": URL}, True, False),
        ({"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": URL}, False, True),
    ],
)
def test_an_endpoint_turns_on_its_signal_and_no_other(
    environ: dict[str, str], traces: bool, metrics: bool
) -> None:
    assert (traces_wanted(environ), metrics_wanted(environ)) == (traces, metrics)
    assert wanted(environ) == (traces or metrics)


@pytest.mark.parametrize("value", ["true", "TRUE", " True "])
def test_otel_sdk_disabled_wins_over_any_endpoint(value: str) -> None:
    assert not wanted({"OTEL_EXPORTER_OTLP_ENDPOINT": URL, "OTEL_SDK_DISABLED": value})


def test_nothing_is_asked_without_an_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", raising=False)

    class Local:
        def watch(self, watcher: object) -> None:
            raise AssertionError("watched without an endpoint")

    assert attach.watch(Local()) is None
