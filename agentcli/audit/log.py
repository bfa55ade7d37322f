"""The audit across threads: every decided call of every thread (or one), oldest first.

Each entry joins a thread's audit record to the tool message that answered its call (the
result status, and the sandbox the call ran under). Reading costs one load of each thread's
latest state (its messages are needed for the results): for N threads, N checkpoint loads,
each a DeltaChannel walk of at most state.SNAPSHOT_EVERY writes; `--thread` loads one.
"""

from __future__ import annotations

import difflib
import json
from collections import defaultdict, deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from langchain_core.messages import ToolMessage

from agentcli.audit.records import NOT_APPROVED
from agentcli.config.durations import parse_duration
from agentcli.errors import UsageError


@dataclass(frozen=True)
class Entry:
    """One decision, as `agentcli audit` lists it."""

    at: str
    thread: str
    workspace: str  # the thread's ("" if its index row is gone)
    call_id: str
    tool: str
    decision: str
    who: str
    by: str
    args: Any
    diff: str | None  # the edited arguments against the model's, or None
    sandbox: str | None
    status: str | None  # ok | error, from the tool message; None: no result (yet)
    feedback: str | None
    chained: bool
    hash: str | None = None  # the record's, in the chain: a fork's copy of it has the same

    @property
    def decision_id(self) -> tuple[Any, ...]:
        """What names the decision whichever thread holds it: a fork (or an undo) copies
        its source's records as they are, so a copy is the same decision, not another."""
        if self.hash:
            return ("hash", self.hash)
        args = json.dumps(self.args, sort_keys=True, default=repr)
        return (self.at, self.call_id, self.tool, self.decision, self.who, self.by, args)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def redacted(self, redact: Callable[[Any], Any]) -> Entry:
        """This entry with every string in it passed through ``redact``."""
        return Entry(**redact(self.as_dict()))


def parse_since(text: str, now: datetime | None = None) -> datetime:
    """An ISO date or date-time (UTC unless it says), or a duration back from now: 2h, 7d."""
    now = now or datetime.now(UTC)
    try:
        return now - timedelta(seconds=parse_duration(text))
    except ValueError:
        pass
    try:
        when = datetime.fromisoformat(text.strip())
    except ValueError:
        raise UsageError(
            f"--since {text!r}: give an ISO date or time (2025-01-31, 2025-01-31T12:00)"
            " or a duration back from now (30m, 2h, 7d)"
        ) from None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def entries(
    read: Callable[[str], Mapping[str, Any]],
    threads: Mapping[str, str],
    since: datetime | None = None,
) -> list[Entry]:
    """The decisions of these threads (id: workspace), oldest first (`since`: at or after);
    `read` gives a thread's latest state (session/history.py's `reader`)."""
    found = [
        entry
        for thread, workspace in threads.items()
        for entry in thread_entries(thread, workspace, read(thread))
    ]
    if since is not None:
        found = [e for e in found if (_when(e.at) or since) >= since]
    return sorted(found, key=lambda e: _when(e.at) or datetime.min.replace(tzinfo=UTC))


def thread_entries(thread: str, workspace: str, state: Mapping[str, Any]) -> Iterator[Entry]:
    """One thread's records (chained and still pending), each with its call's result."""
    results = _results(state.get("messages", []))
    records = [*(state.get("audit") or []), *(state.get("audit_pending") or [])]
    for record in records:
        if not isinstance(record, Mapping):
            continue
        call_id = str(record.get("call_id"))
        message = None
        if record.get("by") != NOT_APPROVED and results[call_id]:  # answered with no message
            message = results[call_id].popleft()
        ran = record.get("ran_args")
        yield Entry(
            at=str(record.get("at") or ""),
            thread=thread,
            workspace=workspace,
            call_id=call_id,
            tool=str(record.get("tool")),
            decision=str(record.get("decision")),
            who=str(record.get("who")),
            by=str(record.get("by")),
            args=record.get("args"),
            diff=args_diff(record.get("args"), ran) if ran is not None else None,
            sandbox=_sandbox(record, message),
            status=None if message is None else "error" if message.status == "error" else "ok",
            feedback=record.get("feedback"),
            chained="hash" in record,
            hash=str(record["hash"]) if isinstance(record.get("hash"), str) else None,
        )


def args_diff(model: Any, ran: Any) -> str | None:
    """A compact unified diff of the arguments as pretty JSON (sorted keys), or None."""
    before, after = _pretty(model), _pretty(ran)
    if before == after:
        return None
    lines = difflib.unified_diff(before, after, "model", "ran", n=1, lineterm="")
    return "\n".join(lines)


def _pretty(value: Any) -> list[str]:
    try:
        return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False).splitlines()
    except (TypeError, ValueError):
        return [repr(value)]


def _results(messages: Sequence[Any]) -> defaultdict[str, deque[ToolMessage]]:
    """Each call id's tool messages, in order (some servers reuse call ids across turns)."""
    found: defaultdict[str, deque[ToolMessage]] = defaultdict(deque)
    for message in messages:
        if isinstance(message, ToolMessage):
            found[message.tool_call_id].append(message)
    return found


def _sandbox(record: Mapping[str, Any], message: ToolMessage | None) -> str | None:
    ran_under = message.additional_kwargs.get("sandbox") if message is not None else None
    chosen = record.get("sandbox")
    return str(ran_under or chosen) if (ran_under or chosen) else None


def _when(at: str) -> datetime | None:
    try:
        when = datetime.fromisoformat(at)
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=UTC)
