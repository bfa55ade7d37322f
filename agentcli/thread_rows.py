"""The thread index's rows: one per thread, what `threads list` shows without loading any
checkpoint, and the values written into them (ids, timestamps, text a column can hold)."""

from __future__ import annotations

import re
import uuid
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, Protocol


class ThreadStatus(StrEnum):
    """Where a thread stands, in the index (`threads list --status`)."""

    IDLE = "idle"
    RUNNING = "running"  # a run is on it, or died on it (settled at the next start)
    AWAITING_APPROVAL = "awaiting_approval"
    ERROR = "error"
    BUSY = "busy"  # on a LangGraph server: a run in progress there

    @classmethod
    def read(cls, text: str) -> ThreadStatus:
        """A status read back from an index: one agentcli does not know (written by hand, or
        by another version) is ERROR, never taken for idle."""
        try:
            return cls(text)
        except ValueError:
            return cls.ERROR


@dataclass
class ThreadRow:
    thread_id: str
    title: str
    status: ThreadStatus
    created_at: str
    updated_at: str
    workspace: str
    model: str
    messages: int = 0
    last_error: str | None = None
    turns: int = 0  # user messages
    input_tokens: int = 0
    output_tokens: int = 0
    note: str | None = None  # for the model, with the next user message
    base_url: str | None = None  # the model server it runs on (session/thread_origin.py)

    def __post_init__(self) -> None:  # a database or a server gives the status as text
        self.status = ThreadStatus.read(self.status)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class ThreadIndex(Protocol):
    """The thread index as chat, run and review read it, in the database (store.Store) or on
    a LangGraph server (on_server.ServerThreads)."""

    def create(
        self, thread_id: str, title: str, workspace: str, model: str, base_url: str | None = None
    ) -> ThreadRow: ...
    def update(self, thread_id: str, **fields: Any) -> None: ...
    def resolve(self, id_or_prefix: str) -> ThreadRow: ...
    def recent(
        self,
        limit: int | None = None,
        *,
        status: str | None = None,
        search: str | None = None,
        workspace: str | None = None,
    ) -> list[ThreadRow]: ...


_SURROGATE = re.compile("[\ud800-\udfff]")


def storable(text: str) -> str:
    """Text a database column can hold: a lone surrogate (a model's "\\ud800" escape, an
    undecodable byte in argv) becomes U+FFFD. The index and search text only: the
    checkpoints keep the messages exactly."""
    return _SURROGATE.sub("\ufffd", text)


def new_thread_id() -> str:
    """A new thread's id, here and on a LangGraph server alike (which takes only UUIDs); any
    unique prefix names it on the command line."""
    return str(uuid.uuid4())


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def stamp() -> str:
    """A thread's created_at or updated_at: to the millisecond, so that `--last` and
    `resume` with no id find the thread updated last among those updated within a second
    (ties go to the one indexed last)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")
