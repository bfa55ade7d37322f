"""The calls of a thread as a decision names them: by call id, or by call id and digest.

A call id alone is not a call: some servers number calls per conversation (`call_1` in every
thread) or per turn (`call_0` at every turn), so one id can name calls of several threads,
or several calls of one thread over time. The digest is what the person saw: a hash of the
thread, the call id, how many calls of that id the thread decided before it, the tool and
its arguments as canonical JSON. `agentcli review` shows it beside each pending call and
accepts `CALL_ID@DIGEST`; a call whose arguments, thread or turn changed since it was listed
has another digest, so a decision never lands on a call nobody saw.

A decided call keeps its digest: each audit record gets the digest its call had while it
waited (records of one id are numbered in the order they were made, the number counting
into the hash), so a decision sent twice is recognised by its digest alone.

A call cut off by a crash (`rerun`) waits again after its first decision: its records are
one call (a record with `rerun` continues the record of that id before it).
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentcli.errors import UsageError
from agentcli.threads.store_key import canonical

DIGEST_CHARS = 12  # 48 bits of SHA-256: what a person copies; the thread id is in the hash
_DIGEST = re.compile(f"[0-9a-f]{{{DIGEST_CHARS}}}")


def digest(thread_id: str, call_id: str, number: int, tool: str, args: Any) -> str:
    """The digest of a call: `number` is how many calls of `call_id` its thread decided
    before it."""
    parts = ["agentcli call", thread_id, call_id, number, tool, args]
    try:
        body = canonical(parts)
    except (TypeError, ValueError):  # arguments that are not JSON (never a valid call)
        body = repr(parts).encode()
    return hashlib.sha256(body).hexdigest()[:DIGEST_CHARS]


@dataclass(frozen=True)
class Ref:
    """A call as an option names it: `CALL_ID` or `CALL_ID@DIGEST`."""

    call_id: str
    digest: str | None = None

    @classmethod
    def parse(cls, text: str) -> Ref:
        head, at, tail = text.rpartition("@")
        if not at:
            return cls(text)
        if not head or not _DIGEST.fullmatch(tail.lower()):
            raise UsageError(
                f"'{text}': name a call as CALL_ID or CALL_ID@DIGEST, the digest being the"
                f" {DIGEST_CHARS} characters after @ that agentcli review shows"
            )
        return cls(head, tail.lower())

    def __str__(self) -> str:
        return f"{self.call_id}@{self.digest}" if self.digest else self.call_id


@dataclass(frozen=True)
class Seen:
    """A call of a thread as it waits (`request`) or as its audit recorded it (`record`)."""

    thread_id: str
    call_id: str
    tool: str
    args: Any
    digest: str
    request: Mapping[str, Any] | None = field(default=None, compare=False)
    record: Mapping[str, Any] | None = field(default=None, compare=False)

    @property
    def ref(self) -> str:
        return f"{self.call_id}@{self.digest}"

    def named_by(self, ref: Ref) -> bool:
        return self.call_id == ref.call_id and ref.digest in (None, self.digest)


class ThreadCalls:
    """One thread's calls by id, each with its digest: those waiting (the pending review's
    action requests) and those decided (the audit's records, chained and not yet chained)."""

    def __init__(
        self, thread_id: str, values: Mapping[str, Any], requests: Iterable[Mapping[str, Any]]
    ) -> None:
        self.thread_id = thread_id
        numbers: Counter[str] = Counter()
        self.decided: list[Seen] = []
        for record in records_of(values):
            call_id = str(record.get("call_id"))
            self.decided.append(
                _seen(
                    thread_id,
                    call_id,
                    numbers[call_id],
                    record.get("tool"),
                    record.get("args"),
                    record=record,
                )
            )
            numbers[call_id] += 1
        self.pending = [
            _seen(thread_id, str(r["id"]), numbers[str(r["id"])], r["name"], r["args"], request=r)
            for r in requests
        ]

    def calls(self, call_id: str) -> list[list[Seen]]:
        """The decided calls of this id, oldest first, each as its records (a call cut off
        by a crash has its first decision's record and the one made when it waited again)."""
        found: list[list[Seen]] = []
        for seen in self.decided:
            if seen.call_id != call_id:
                continue
            if found and _continues(seen, found[-1][-1]):
                found[-1].append(seen)
            else:
                found.append([seen])
        return found

    def earlier(self, call_id: str, waiting: Seen | None = None) -> list[list[Seen]]:
        """The decided calls of this id, without the one `waiting` continues (a call cut off
        by a crash waits again under its first decision)."""
        found = self.calls(call_id)
        if (
            waiting is not None
            and waiting.thread_id == self.thread_id
            and waiting.request is not None
            and waiting.request.get("rerun")
            and found
            and found[-1][-1].tool == waiting.tool
        ):
            found.pop()
        return found


def records_of(values: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """A thread's audit records in the order they were made (chained, then those the next
    node will chain)."""
    records = [*(values.get("audit") or []), *(values.get("audit_pending") or [])]
    return [record for record in records if isinstance(record, Mapping)]


def with_digests(
    thread_id: str, values: Mapping[str, Any], requests: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """The action requests, each with its `digest` (copies: the requests are unchanged)."""
    calls = ThreadCalls(thread_id, values, requests)
    pairs = zip(requests, calls.pending, strict=True)
    return [{**request, "digest": seen.digest} for request, seen in pairs]


def _seen(thread_id: str, call_id: str, number: int, tool: Any, args: Any, **kept: Any) -> Seen:
    name = str(tool)
    hashed = digest(thread_id, call_id, number, name, args)
    return Seen(thread_id, call_id, name, args, hashed, **kept)


def _continues(record: Seen, before: Seen) -> bool:
    """Whether `record` is the decision on a cut-off call that `before` first decided."""
    return bool(record.record and record.record.get("rerun")) and record.tool == before.tool
