"""Anchoring a thread's audit chain outside the checkpoint, after each run.

The anchor only moves forward: it is replaced only by a longer chain that still holds the
anchored record where it was. A chain shortened or rewritten in the database since the last
run keeps its old anchor, and `agentcli audit verify` reports it; anchoring it anew would
bless the change.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agentcli.audit.chain import anchor_seal
from agentcli.threads.store import Store
from agentcli.threads.store_key import ApprovalKey


def advance(store: Store, key: ApprovalKey, thread_id: str, audit: Sequence[Any]) -> bool:
    """Anchor the end of `audit` when it extends the anchored chain (or none is anchored
    and it has chained records); whether the anchor moved."""
    last = len(audit)
    while last and not (isinstance(audit[last - 1], Mapping) and "hash" in audit[last - 1]):
        last -= 1  # records still waiting to be chained are not anchored
    if not last:
        return False
    digest = str(audit[last - 1]["hash"])
    anchor = store.audit_anchor(thread_id)
    if anchor is not None:
        records, anchored, seal = anchor
        if (records, anchored) == (last, digest):
            return False
        held = audit[records - 1] if 0 < records <= last else None
        if not (isinstance(held, Mapping) and held.get("hash") == anchored):
            return False
        if not key.check(seal, "audit-anchor", thread_id, records, anchored):
            return False
    store.anchor_audit(thread_id, last, digest, anchor_seal(key, thread_id, last, digest))
    return True
