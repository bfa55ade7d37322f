"""Which call a decision names (`agentcli review --approve REF`): one waiting call, one
decided call (a decision sent again), or a refusal in one line that changes nothing.

`CALL_ID@DIGEST` names exactly the call that was listed with that digest (call_digests.py):
if it waits, it is decided; if it was decided, that is said; if neither (its arguments,
thread or turn changed since it was listed), it is refused.

A bare `CALL_ID` names a call only when nothing else ever had that id in the scope looked
in (one thread, or every thread of the store): a call waiting under an id that another
waiting call has, or that a call decided before had (a server that reuses ids, a retried
decision that would otherwise land on the next call of that id), is refused with the
digest to name it by. So is a decided id that several calls had. A bare id looked up in
every thread reads the audit of every thread (one state load each); a digest stops at the
thread that has it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from agentcli.errors import UsageError
from agentcli.session.call_digests import Ref, Seen, ThreadCalls

NOTHING = "nothing changed"


@dataclass
class Found:
    """What a reference names: a call that waits, or the records of one decided."""

    waiting: Seen | None = None
    decided: list[Seen] = field(default_factory=list)


class Lookup:
    """Where references are looked up: the calls waiting in scope, and the decided calls
    of the threads in scope, read when first needed and then kept."""

    def __init__(self, waiting: list[Seen], threads: Iterable[ThreadCalls], where: str) -> None:
        self.waiting = waiting
        self.where = where  # "in thread ID" or "in any thread"
        self._unread: Iterator[ThreadCalls] = iter(threads)
        self._read: list[ThreadCalls] = []

    def threads(self) -> Iterator[ThreadCalls]:
        """The threads in scope, those read already first."""
        index = 0
        while True:
            if index == len(self._read):
                following = next(self._unread, None)
                if following is None:
                    return
                self._read.append(following)
            yield self._read[index]
            index += 1

    def find(self, ref: Ref) -> Found:
        return self._by_digest(ref) if ref.digest else self._by_id(ref.call_id)

    def _by_digest(self, ref: Ref) -> Found:
        hits = [call for call in self.waiting if call.named_by(ref)]
        if len(hits) > 1:  # the same digest twice: 48 bits make this all but impossible
            names = ", ".join(call.thread_id for call in hits)
            raise UsageError(f"{ref} names calls of several threads ({names}): give --thread ID")
        if hits:
            return Found(waiting=hits[0])
        for thread in self.threads():
            for seen in thread.decided:
                if seen.named_by(ref):
                    return Found(decided=[seen])
        raise UsageError(
            f"no call {ref} waiting or decided {self.where}: it may have changed since it was"
            f" listed (agentcli review lists the calls waiting, with their digests); {NOTHING}"
        )

    def _by_id(self, call_id: str) -> Found:
        hits = [call for call in self.waiting if call.call_id == call_id]
        if len(hits) > 1:
            names = ", ".join(f"{call.ref} in thread {call.thread_id}" for call in hits)
            raise UsageError(
                f"call {call_id} is pending in {len(hits)} threads ({names}): name one as"
                f" CALL_ID@DIGEST, or its thread with --thread ID; {NOTHING}"
            )
        waiting = hits[0] if hits else None
        earlier = [
            (thread.thread_id, call)
            for thread in self.threads()
            for call in thread.earlier(call_id, waiting)
        ]
        if waiting is not None and earlier:
            thread_id, call = earlier[-1]
            was = call[-1].record.get("decision") if call[-1].record else "decided"
            raise UsageError(
                f"call {call_id} names more than one call: one waits in thread"
                f" {waiting.thread_id} ({waiting.tool}), and one of that id was decided in"
                f" thread {thread_id} ({call[-1].tool}, {was}); to decide the one waiting,"
                f" name it {waiting.ref}; {NOTHING}"
            )
        if waiting is not None:
            return Found(waiting=waiting)
        if not earlier:
            pending = ", ".join(call.ref for call in self.waiting)
            listed = f" (pending: {pending})" if pending and self.where != "in any thread" else ""
            raise UsageError(f"no pending call '{call_id}' {self.where}{listed}; {NOTHING}")
        if len(earlier) > 1:
            names = ", ".join(dict.fromkeys(thread_id for thread_id, _ in earlier))
            raise UsageError(
                f"call {call_id} names {len(earlier)} decided calls (thread {names}): name one"
                f" as CALL_ID@DIGEST; {NOTHING}"
            )
        return Found(decided=earlier[0][1])
