"""`agentcli audit verify`: every thread's audit chain recomputed and checked against its
anchor (agent/review/audit_chain.py says what the chain proves, and what it cannot)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from agentcli_tools.plurals import counted

from agentcli.agent.review.approval_seals import ApprovalKey
from agentcli.agent.review.audit_chain import Fault, check
from agentcli.session.history import reader_of, values
from agentcli.threads.store import Store


@dataclass
class Verdict:
    """What verifying found, over all the threads it read."""

    threads: int = 0
    chained: int = 0
    unchained: int = 0
    faults: list[tuple[str, Fault]] = field(default_factory=list)
    notes: list[tuple[str, str]] = field(default_factory=list)


def verify(store: Store, key: ApprovalKey, thread_ids: Iterable[str]) -> Verdict:
    verdict, reader = Verdict(), reader_of(store)
    for thread in thread_ids:
        audit = values(store, thread, reader).get("audit") or []
        faults, notes = check(key, audit, store.audit_anchor(thread), thread)
        verdict.threads += 1
        verdict.unchained += len(notes)
        verdict.chained += sum(1 for r in audit if isinstance(r, dict) and "hash" in r)
        verdict.faults += [(thread, fault) for fault in faults]
        if notes:
            verdict.notes.append(
                (thread, f"{counted(len(notes), 'record')} unchained (older than the audit chain)")
            )
    return verdict
