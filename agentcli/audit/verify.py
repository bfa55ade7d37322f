"""`agentcli audit verify`: every thread's audit chain recomputed and checked against its
anchor (audit/chain.py says what the chain proves, and what it cannot)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from agentcli_tools.plurals import counted

from agentcli.audit.chain import Fault, check
from agentcli.threads.store import Store
from agentcli.threads.store_key import ApprovalKey


@dataclass
class Verdict:
    """What verifying found, over all the threads it read."""

    threads: int = 0
    chained: int = 0
    unchained: int = 0
    faults: list[tuple[str, Fault]] = field(default_factory=list)
    notes: list[tuple[str, str]] = field(default_factory=list)


def verify(
    store: Store,
    key: ApprovalKey,
    thread_ids: Iterable[str],
    read: Callable[[str], Mapping[str, Any]],
) -> Verdict:
    """`read` gives a thread's latest state (session/history.py's `reader`); the anchors
    are the store's."""
    verdict = Verdict()
    for thread in thread_ids:
        audit = read(thread).get("audit") or []
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
