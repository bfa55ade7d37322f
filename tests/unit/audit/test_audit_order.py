"""The audit lists every thread's decisions oldest first, to the millisecond."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from agentcli.audit import records
from agentcli.audit.log import entries


def test_two_threads_deciding_within_one_second_are_listed_in_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    times = iter(
        [
            datetime(2026, 11, 28, 12, 0, 0, 200_000, tzinfo=UTC),
            datetime(2026, 11, 28, 12, 0, 0, 700_000, tzinfo=UTC),
        ]
    )

    class Clock(datetime):
        @classmethod
        def now(cls, tz: Any = None) -> datetime:  # type: ignore[override]
            return next(times)

    monkeypatch.setattr(records, "datetime", Clock)
    first = records.audit_record(
        {"id": "call_1", "name": "shell", "args": {}}, "allowed", "person", "y"
    )
    later = records.audit_record(
        {"id": "call_1", "name": "shell", "args": {}}, "allowed", "agentcli", "r"
    )
    states = {"a": {"audit": [first]}, "b": {"audit": [later]}}
    # the newest thread comes first, as the thread index lists them
    listed = entries(states.__getitem__, {"b": "/w", "a": "/w"})
    assert [(e.thread, e.who) for e in listed] == [("a", "person"), ("b", "agentcli")]
    assert listed[0].at == "2026-11-28T12:00:00.200+00:00"
