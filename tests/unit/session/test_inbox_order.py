"""The inbox lists the calls waiting oldest first, to the fraction of a second."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from agentcli_tools.registry import BUILTIN_TOOLS

from agentcli.config import Settings
from agentcli.events import ReviewRequest
from agentcli.policy.approval_policy import Policy
from agentcli.session import inbox as inbox_module
from agentcli.session.inbox import inbox
from agentcli.session.local import Session
from agentcli.threads.backends import open_store
from tests.helpers.fakes import FakeChatModel, call


def test_two_reviews_parked_within_one_second_are_listed_oldest_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = Settings(db=str(tmp_path / "threads.db"))
    store = open_store(config)
    workspace = tmp_path / "work"
    workspace.mkdir()

    def session(*replies: Any) -> Session:
        model = FakeChatModel(replies=list(replies), calls=[])
        tools = [BUILTIN_TOOLS["write_file"]]
        return Session(config, store, Policy(), workspace=workspace, model=model, tools=tools)

    parked = []
    for name in ("first", "second"):
        s = session(call(("write_file", {"path": f"{name}.txt", "content": "x"})))
        assert any(isinstance(event, ReviewRequest) for event in s.send(name))
        parked.append(s.thread_id)
    # the second thread is the one updated last, so the store lists it first; both parked
    # in the same second, as a script parking two threads does
    at = {
        parked[0]: datetime(2026, 11, 28, 12, 0, 0, 200_000, tzinfo=UTC),
        parked[1]: datetime(2026, 11, 28, 12, 0, 0, 700_000, tzinfo=UTC),
    }
    monkeypatch.setattr(
        inbox_module,
        "parked_since",
        lambda snapshot: at[snapshot.config["configurable"]["thread_id"]],
    )
    listed = inbox(session())
    assert [c.thread_id for c in listed] == parked
    assert [c.parked_at for c in listed] == ["2026-11-28T12:00:00+00:00"] * 2
