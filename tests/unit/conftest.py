"""A Session on a temporary database, with a scripted model and two recording tools."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langchain_core.tools import tool

from agentcli.config import Settings
from agentcli.policy.approval_policy import Policy
from agentcli.session.local import Session
from agentcli.threads.backends import open_store
from tests.helpers.fakes import FakeChatModel

RAN: list[dict[str, Any]] = []


@tool
def note(text: str, times: int = 1) -> str:
    """Write a note.

    Args:
        text: the note
        times: how many times
    """
    RAN.append({"text": text, "times": times})
    return f"noted {text!r} x{times}"


@tool
def peek(path: str) -> str:
    """Look at a path.

    Args:
        path: what to look at
    """
    RAN.append({"path": path})
    return f"looked at {path}"


@pytest.fixture(autouse=True)
def _clear() -> None:
    RAN.clear()


@pytest.fixture
def make(tmp_path: Path, database: str):
    """Sessions on one database (a new store each: as another process would open it)."""

    def make(replies: list[AIMessage], policy: Policy | None = None, **settings: Any) -> Session:
        model = FakeChatModel(replies=replies, calls=[])
        config = Settings(db=database, **settings)
        session = Session(
            config,
            open_store(config),
            policy or Policy(),
            workspace=tmp_path,
            model=model,
            tools=[note, peek],
        )
        return session

    return make
