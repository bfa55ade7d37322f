"""What one `agentcli review` asks, turned into the decisions it sends: the calls the options
name (CALL_ID or CALL_ID@DIGEST, or 'all' of a named thread), looked up (call_lookup.py)
before anything is sent, grouped by the thread each waits in, each pinned to the digest it
had when it was looked up; calls decided already are said, or refused when decided
otherwise. Nothing is sent until every name is found."""

from __future__ import annotations

import json
from copy import copy
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agentcli.cli.common_options import warn
from agentcli.decisions import UNCHANGED, Decide, Decision
from agentcli.errors import UsageError
from agentcli.session.call_digests import Ref, Seen

if TYPE_CHECKING:
    from agentcli.session.call_lookup import Lookup
    from agentcli.session.thread_session import ThreadSession

BY = "agentcli review"  # who decided, in the audit
ALL = "all"
RAN = {"approved", "allowed", "edited", "approved again"}
DONE = {"marked done"}


class Asked:
    """What the options name: (call, kind) pairs, and the kinds asked of 'all'."""

    def __init__(
        self,
        approve: list[str],
        reject: list[str],
        done: list[str],
        unconfined: list[str],
        edit: str | None,
    ) -> None:
        given = [
            *((text, "approve") for text in approve),
            *((text, "reject") for text in reject),
            *((text, "done") for text in done),
            *((text, "unconfined") for text in unconfined),
            *([(edit, "edit")] if edit else []),
        ]
        if ALL in unconfined or edit == ALL:
            raise UsageError("--unconfined and --edit name one call each: not 'all'")
        self.named = [(Ref.parse(text), kind) for text, kind in given if text != ALL]
        self.everything = [kind for text, kind in given if text == ALL]

    @property
    def anything(self) -> bool:
        return bool(self.named or self.everything)

    def pinned(self, waiting: list[Seen]) -> Asked:
        """What this asks with 'all' made the calls waiting now, each named by its digest
        (so that 'all' still means them once they are decided); itself without 'all'."""
        if not self.everything:
            return self
        pinned = copy(self)
        named = [
            (Ref(call.call_id, call.digest), kind) for call in waiting for kind in self.everything
        ]
        pinned.named, pinned.everything = [*self.named, *named], []
        return pinned


@dataclass
class ThreadAsk:
    """The decisions asked of one thread: kinds by call id, each call pinned to its digest,
    and the kinds asked of every call ('all')."""

    thread_id: str
    kinds: dict[str, set[str]] = field(default_factory=dict)
    pins: dict[str, str] = field(default_factory=dict)  # call id: digest when looked up
    everything: list[str] = field(default_factory=list)

    def asked(self) -> Asked:
        """The same ask, each call named by the digest it was looked up with."""
        texts: dict[str, list[str]] = {k: [] for k in ("approve", "reject", "done", "unconfined")}
        texts["edit"] = []
        for call_id, kinds in self.kinds.items():
            for kind in kinds:
                texts[kind].append(f"{call_id}@{self.pins[call_id]}")
        for kind in self.everything:
            texts[kind].append(ALL)
        edit = texts["edit"][0] if texts["edit"] else None
        return Asked(texts["approve"], texts["reject"], texts["done"], texts["unconfined"], edit)

    def check(self, waiting: list[Seen]) -> None:
        """Refuse, changing nothing, if a call named no longer waits as it was found."""
        now = {call.call_id: call.digest for call in waiting}
        ids = [call.call_id for call in waiting]
        for call_id, digest in self.pins.items():
            if ids.count(call_id) > 1:  # decisions go by id: one would decide both
                raise UsageError(
                    f"thread {self.thread_id} has {ids.count(call_id)} calls waiting under the"
                    f" id {call_id}: decide them at the terminal (agentcli resume"
                    f" {self.thread_id}); nothing changed"
                )
            if now.get(call_id) != digest:
                shown = f"{call_id}@{now[call_id]}" if call_id in now else "no call of that id"
                raise UsageError(
                    f"call {call_id}@{digest} of thread {self.thread_id} changed while this"
                    f" review ran (waiting now: {shown}); nothing changed in that thread"
                )


@dataclass
class Plan:
    """The threads to decide, in the order first named, and the calls decided already."""

    threads: dict[str, ThreadAsk] = field(default_factory=dict)
    decided: list[dict[str, Any]] = field(default_factory=list)
    named: int = 0  # calls named (not 'all')

    @classmethod
    def of(cls, asked: Asked, lookup: Lookup, thread_id: str | None = None) -> Plan:
        """Every name looked up first (UsageError, nothing sent, if one fails)."""
        plan = cls(named=len(asked.named))
        if asked.everything:
            assert thread_id is not None, "'all' is refused without a thread"
            plan.threads[thread_id] = ThreadAsk(thread_id, everything=asked.everything)
        for ref, kind in asked.named:
            found = lookup.find(ref)
            if found.waiting is None:
                plan.decided.append(already(found.decided, ref, kind))
                continue
            call = found.waiting
            ask = plan.threads.setdefault(call.thread_id, ThreadAsk(call.thread_id))
            ask.kinds.setdefault(call.call_id, set()).add(kind)
            ask.pins[call.call_id] = call.digest
        return plan


def already(found: list[Seen], ref: Ref, kind: str) -> dict[str, Any]:
    """A call named that was decided already (its records, oldest first): said in one line
    when it was decided as asked (the note for --output json); else a usage error."""
    matching = [seen for seen in found if _as_asked(kind, str(_record(seen).get("decision")))]
    seen = (matching or found)[-1]
    record = _record(seen)
    was = f"{record.get('decision')} by {record.get('who')} ({record.get('by')})"
    said = f"call {ref} of thread {seen.thread_id} was already decided: {was}"
    if not matching:
        raise UsageError(f"{said}; nothing changed")
    warn(f"{said}; nothing changed")
    return {"call_id": seen.call_id, "thread_id": seen.thread_id, "decision": was}


def _record(seen: Seen) -> dict[str, Any]:
    return dict(seen.record or {})


def _as_asked(kind: str, decision: str) -> bool:
    """Whether an audit decision is what an option asks: approve (and unconfined) for a
    call that ran, edit for an edit, done for done, reject for any refusal."""
    ran = "approve" if decision in RAN else "done" if decision in DONE else "reject"
    if kind == "edit":
        return decision == "edited"
    return ran == ("approve" if kind == "unconfined" else kind)


def decisions(
    session: ThreadSession,
    ask: ThreadAsk,
    requests: list[dict[str, Any]],
    message: str | None,
    args: str | None,
) -> list[Decision]:
    """One decision per waiting call, in order: the one named for it, else 'all''s."""
    out = []
    for request in requests:
        kinds = ask.kinds.get(str(request["id"]), set())
        decision = _decision(session, ask, request, kinds, message, args)
        if "unconfined" in kinds:
            if not request.get("sandbox") or decision["type"] != "approve":
                raise UsageError(
                    f"--unconfined {request['id']}: only for a call that would run in the"
                    " sandbox (a shell command), and not with another decision for it"
                )
            decision = Decide.approve(unconfined=True, by=BY)
        out.append(decision)
    return out


def _decision(
    session: ThreadSession,
    ask: ThreadAsk,
    request: dict[str, Any],
    kinds: set[str],
    message: str | None,
    args: str | None,
) -> Decision:
    call_id = request["id"]
    if "edit" in kinds:
        return _edit(session, request, args)
    chosen = kinds or set(ask.everything)
    if "done" in chosen:
        if not request.get("rerun"):
            raise UsageError(f"--done is for a call cut off by a crash; {call_id} has not run yet")
        return Decide.done(by=BY)
    if "reject" in chosen:
        return Decide.reject(message, by=BY)
    if chosen & {"approve", "unconfined"}:
        return Decide.approve(by=BY)
    raise UsageError(
        f"call {call_id} has no decision (thread {ask.thread_id}): name it, or use 'all'"
        " with the thread named"
    )


def _edit(session: ThreadSession, request: dict[str, Any], args: str | None) -> Decision:
    call_id = request["id"]
    try:
        new_args = json.loads(args or "")
    except json.JSONDecodeError as exc:
        raise UsageError(f"--args is not valid JSON: {exc}") from None

    problem = session.check_edit(request["name"], new_args, request["args"])
    if problem and problem != UNCHANGED:
        raise UsageError(f"--args for {call_id}: {problem}")
    if problem == UNCHANGED:  # the same values, defaults applied
        raise UsageError(
            f"--args for {call_id} are its arguments unchanged, which is no edit:"
            f" to run it as it is, use --approve {call_id}"
        )
    return Decide.edit(request["name"], new_args, by=BY)
