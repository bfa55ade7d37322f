"""OpenTelemetry export: a trace per turn and a few metrics, sent by OTLP (HTTP/protobuf)
to the collector the standard OTEL_* variables name, and nowhere when none is named.

otel_env.py     what the OTEL_* variables ask for, read without importing OpenTelemetry
run_trace.py    the session's runs watched (session/run_watcher.py): spans and metric points
span_facts.py   a span's attributes from what the graph streams: a model turn, a tool's
                result, an audit record (the decision and who made it)
otlp_export.py  the spans and points handed to OpenTelemetry's SDK, every value redacted;
                the bounded flush at exit
attach.py       what the command line calls: attach to a session, flush at exit

Only otlp_export.py imports OpenTelemetry (pyproject's import contracts), and only once
the person has set an endpoint. docs/telemetry.md lists the spans, attributes and metrics.
"""
