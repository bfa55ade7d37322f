"""The audit's hash chain: what `check` finds in a changed, inserted, deleted or moved record,
and the node wrapper chaining what the tools tasks left pending."""

from __future__ import annotations

from types import SimpleNamespace

from langgraph.types import Command, Overwrite

from agentcli.audit.chain import GENESIS, anchor_seal, chain, chaining, check
from agentcli.threads.store_key import ApprovalKey

KEY = ApprovalKey(b"k" * 32)
OTHER = ApprovalKey(b"o" * 32)


def records(n: int) -> list[dict]:
    plain = [{"call_id": f"c{i}", "tool": "shell", "decision": "approved"} for i in range(n)]
    return chain(KEY, GENESIS, plain)


def anchored(audit: list[dict]) -> tuple[int, str, str]:
    last = audit[-1]["hash"]
    return len(audit), last, anchor_seal(KEY, "t", len(audit), last)


def faults(audit: list, anchor=None) -> list[tuple[int, str]]:
    found, _ = check(KEY, audit, anchor, "t")
    return [(f.position, f.what.split(":")[0]) for f in found]


def test_a_chain_is_the_same_when_made_again_and_checks_clean() -> None:
    audit = records(3)
    assert audit == records(3)
    assert audit[0]["prev"] == GENESIS and audit[1]["prev"] == audit[0]["hash"]
    assert faults(audit, anchored(audit)) == []


def test_changed_inserted_deleted_and_moved_records_are_found() -> None:
    audit = records(4)
    anchor = anchored(audit)
    changed = [*audit[:1], {**audit[1], "decision": "rejected"}, *audit[2:]]
    assert faults(changed, anchor) == [(2, "changed")]
    forged = chain(OTHER, audit[0]["hash"], [{"call_id": "x"}])[0]
    assert faults([audit[0], forged, *audit[1:]], anchor) == [(2, "inserted")]
    assert faults([audit[0], *audit[2:]], anchor) == [(2, "deleted")]
    assert faults([audit[1], audit[0], *audit[2:]], anchor)[0] == (1, "moved")
    assert faults(audit[:3], anchor) == [(4, "deleted")]
    assert faults(audit, None) == [(4, "not anchored")]
    assert faults(audit, (3, audit[2]["hash"], anchor[2])) == [(3, "anchor changed")]


def test_records_older_than_the_chain_are_notes_but_one_inside_it_is_a_fault() -> None:
    old = {"call_id": "old", "tool": "shell"}
    audit = chain(KEY, GENESIS, [{"call_id": "a"}])
    found, notes = check(KEY, [old, *audit], anchored([old, *audit]), "t")
    assert found == [] and notes == ["record 1: unchained (older than the audit chain)"]
    assert faults([*audit, old], anchored(audit)) == [(2, "inserted")]


def test_the_wrapper_chains_the_pending_records_before_the_nodes_own() -> None:
    audit = records(1)
    state = {"audit": audit, "audit_pending": [{"call_id": "tool"}]}
    runtime = SimpleNamespace(context=SimpleNamespace(approval_key=KEY))

    def node(state, runtime):
        return Command(update={"audit": [{"call_id": "mine"}]}, goto="agent")

    result = chaining(node)(state, runtime, {})
    update = result.update
    assert [r["call_id"] for r in update["audit"]] == ["tool", "mine"]
    assert update["audit"][0]["prev"] == audit[0]["hash"]
    assert isinstance(update["audit_pending"], Overwrite) and result.goto == "agent"
    assert faults(audit + update["audit"], anchored(audit + update["audit"])) == []
