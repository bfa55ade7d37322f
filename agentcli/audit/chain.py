"""The audit's hash chain: each record sealed with the one before it, and how a chain is checked.

Every record a node appends to a thread's `audit` carries `prev`, the `hash` of the record
before it in that thread (GENESIS for the first chained record), and `hash`, an HMAC over
the record's canonical JSON with `prev` in it, made with the store's approval key
(store_key.ApprovalKey; the leading "audit" keeps these apart from approval seals). So
a record changed, inserted, removed or moved in the checkpoint database no longer fits its
neighbours, and a new one cannot be made to fit without the key, which only those who can
read the store's `agentcli_secrets` table have. The thread id is not
sealed: a fork copies its parent's chain, which stays valid in the copy.

Chaining happens where records enter the state, in one wrapper around the graph's serial
nodes (`chaining`): it reads the tail of the state's audit and chains what the node returns,
a pure function of the two, so a node that LangGraph runs again produces the same records.
The tools node runs as parallel tasks that cannot see the state: its records wait in
`audit_pending` and the next serial node (always the agent node) chains them, in the order
LangGraph applied them.

Records older than the chain (no `hash`) are listed as unchained, not as faults; one after
the chain began is. The chain's end is anchored outside the checkpoint (threads/
audit_anchors.py) so that removing the last records is found too (`check`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentcli_tools.plurals import counted
from langchain_core.runnables import RunnableConfig
from langgraph.types import Command, Overwrite

from agentcli.threads.store_key import ApprovalKey, canonical, key_of

GENESIS = "genesis"


def record_hash(key: ApprovalKey, record: Mapping[str, Any]) -> str:
    """The HMAC of a record (with its `prev`, without its `hash`)."""
    return key.seal(*_parts(record))


def _parts(record: Mapping[str, Any]) -> tuple[Any, ...]:
    """What a record's hash covers: its canonical JSON with `prev`, without `hash`; a record
    whose arguments are not JSON (a forged task) as text."""
    body = {k: v for k, v in record.items() if k != "hash"}
    try:
        canonical(body)
    except (TypeError, ValueError):
        return ("audit", repr(sorted(body.items())))
    return ("audit", body)


def tail_hash(audit: Sequence[Any]) -> str:
    """The hash a record appended to `audit` links to."""
    for record in reversed(audit):
        if isinstance(record, Mapping) and isinstance(record.get("hash"), str):
            return str(record["hash"])
    return GENESIS


def chain(key: ApprovalKey, prev: str, records: Sequence[Mapping[str, Any]]) -> list[dict]:
    """`records` linked after the record whose hash is `prev`."""
    out = []
    for record in records:
        linked = {k: v for k, v in record.items() if k not in ("prev", "hash")}
        linked["prev"] = prev
        prev = linked["hash"] = record_hash(key, linked)
        out.append(linked)
    return out


def anchor_seal(key: ApprovalKey, thread_id: str, records: int, last: str) -> str:
    """The seal of a chain's end as anchored outside the checkpoint (bound to its thread)."""
    return key.seal("audit-anchor", thread_id, records, last)


def chaining(node: Callable[..., Any]) -> Callable[..., Any]:
    """`node`, its audit records (and those the tools tasks left pending) chained."""
    takes_config = len(inspect.signature(node).parameters) >= 3

    def chained(state: Any, runtime: Any, config: RunnableConfig) -> Any:
        result = node(state, runtime, config) if takes_config else node(state, runtime)
        pending = list(state.get("audit_pending") or [])
        command = isinstance(result, Command)
        update = (result.update if command else result) or {}
        if not isinstance(update, dict):
            return result
        records = list(update.get("audit") or [])
        if not pending and not records:
            return result
        prev = tail_hash(state.get("audit") or [])
        update = {**update, "audit": chain(key_of(runtime.context), prev, [*pending, *records])}
        if pending:
            update["audit_pending"] = Overwrite([])
        if not command:
            return update
        return Command(graph=result.graph, update=update, resume=result.resume, goto=result.goto)

    chained.__name__ = getattr(node, "__name__", "node")
    chained.__doc__ = node.__doc__
    return chained


@dataclass(frozen=True)
class Fault:
    """One thing wrong with a thread's chain: where (1-based record number) and what."""

    position: int
    what: str


def check(
    key: ApprovalKey,
    audit: Sequence[Any],
    anchor: tuple[int, str, str] | None,
    thread_id: str,
) -> tuple[list[Fault], list[str]]:
    """(faults, notes) of one thread's audit against its anchor (records, hash, seal)."""
    faults: list[Fault] = []
    notes: list[str] = []
    started = False
    expected = GENESIS
    for number, record in enumerate(audit, 1):
        if not isinstance(record, Mapping) or "hash" not in record:
            if started:
                faults.append(Fault(number, "inserted: a record without a hash inside the chain"))
            else:
                notes.append(f"record {number}: unchained (older than the audit chain)")
            continue
        started = True
        valid = key.check(record.get("hash"), *_parts(record))
        linked = record.get("prev") == expected
        if not valid:
            after = audit[number] if number < len(audit) else None
            if isinstance(after, Mapping) and after.get("prev") == expected and linked:
                faults.append(Fault(number, "inserted: a record the key never sealed"))
                continue  # the next record follows the one before this
            else:
                faults.append(Fault(number, "changed: its content does not match its hash"))
        elif not linked:
            what = (
                "deleted: one or more records before this one are missing"
                if _known(audit, record.get("prev")) is None
                else "moved: it does not follow the record it was sealed after"
            )
            faults.append(Fault(number, what))
        expected = str(record.get("hash"))
    faults.extend(_anchored(key, audit, anchor, thread_id, started))
    return faults, notes


def _known(audit: Sequence[Any], digest: Any) -> int | None:
    for number, record in enumerate(audit, 1):
        if isinstance(record, Mapping) and record.get("hash") == digest:
            return number
    return None


def _anchored(
    key: ApprovalKey,
    audit: Sequence[Any],
    anchor: tuple[int, str, str] | None,
    thread_id: str,
    started: bool,
) -> list[Fault]:
    """The chain's end against the anchor: the anchored record must still be where it was."""
    if anchor is None:
        if started:
            return [Fault(len(audit), "not anchored: the chain's end has no anchor (removed?)")]
        return []
    records, last, seal = anchor
    if not key.check(seal, "audit-anchor", thread_id, records, last):
        return [Fault(records, "anchor changed: its seal does not match")]
    if _known(audit, last) is not None:  # later records: written since it was anchored
        return []
    if records > len(audit):
        return [
            Fault(len(audit) + 1, f"deleted: {counted(records - len(audit), 'record')} at the end")
        ]
    return [Fault(records, "deleted or replaced: the anchored last record is not there")]
