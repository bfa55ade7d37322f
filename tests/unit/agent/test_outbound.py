"""agent/outbound.py: log records are made redacted, whatever logger and handler; the
trace anonymizer redacts keys and values of what a run carries."""

from __future__ import annotations

import base64
import io
import logging
from collections.abc import Iterator

import pytest
from agentcli_tools.redaction import Redactor

from agentcli.agent import outbound

KEY = "sk-test-Zq8vW3kP1xN7mR4tY6uB9cE2"


@pytest.fixture
def guarded(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    factory = logging.getLogRecordFactory()
    monkeypatch.setattr(outbound, "_current", None)
    monkeypatch.setattr(outbound, "_tracing_guarded", True)  # no LangSmith client here
    outbound.guard_outbound(Redactor({"OPENAI_API_KEY": KEY}))
    yield
    logging.setLogRecordFactory(factory)


def test_a_log_record_is_made_redacted(guarded: None) -> None:
    stream = io.StringIO()
    logger = logging.getLogger("test.outbound")
    handler = logging.StreamHandler(stream)
    logger.addHandler(handler)
    try:
        logger.warning("key %s in %r", KEY, {"k": base64.b64encode(KEY.encode()).decode()})
        try:
            raise ValueError(f"boom {KEY.encode().hex()}")
        except ValueError:
            logger.exception("failed")
    finally:
        logger.removeHandler(handler)
    written = stream.getvalue()
    assert KEY not in written and KEY.encode().hex() not in written
    assert base64.b64encode(KEY.encode()).decode()[:-2] not in written
    assert written.count("[redacted OPENAI_API_KEY") == 3
    assert "Traceback" in written


def test_the_trace_anonymizer_redacts_keys_and_values(guarded: None) -> None:
    run = {"inputs": {KEY: [f"a {KEY}", {"x": KEY.encode().hex().upper()}]}, "n": 3}
    assert outbound._anonymize(run) == {
        "inputs": {
            "[redacted OPENAI_API_KEY]": [
                "a [redacted OPENAI_API_KEY]",
                {"x": "[redacted OPENAI_API_KEY as hex]"},
            ]
        },
        "n": 3,
    }
