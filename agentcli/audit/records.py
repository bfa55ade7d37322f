"""The thread's audit: one record per decided call, and who decided it."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from agentcli.decisions import EXPIRED_BY


def audit_record(call: Any, decision: str, who: str, by: str, **extra: Any) -> dict[str, Any]:
    """One entry of the thread's audit: which call, what was decided, by whom."""
    return {
        "call_id": call["id"],
        "tool": call["name"],
        "args": call["args"],
        "decision": decision,
        "who": who,
        "by": by,
        "ran_args": None,
        "feedback": None,
        # to the millisecond: the audit lists every thread's decisions by this time, and two
        # threads decide within one second as soon as a script runs them back to back
        "at": datetime.now(UTC).isoformat(timespec="milliseconds"),
        **extra,
    }


def egress_record(call: Any, decision: Any) -> dict[str, Any]:
    """The audit's record of what a command's egress proxy did (a tools.egress_proxy
    Decision): the call's id, the pseudo-tool ``network`` and the host it asked for."""
    asked = {"id": call["id"], "name": EGRESS_TOOL, "args": {"how": decision.how}}
    asked["args"] |= {"host": decision.host, "port": decision.port}
    verdict = "allowed" if decision.allowed else "refused"
    return audit_record(asked, verdict, decision.who, f"egress proxy: {decision.why}")


EGRESS_TOOL = "network"  # what the audit names a command's connection through the proxy
PEOPLE = ("person", "client")

# what a record of agentcli's own refusal says in `by`: a call refused for its seals
NOT_APPROVED = "refused: not approved. This call did not pass agentcli's review; it was not run."
ALTERED_BY = "review changed from outside"  # the approve node did not believe the review
UNSEALED = (ALTERED_BY, NOT_APPROVED)  # what agentcli refuses a decided call for: its seals


def refusal_kind(who: str, by: str, feedback: bool) -> str:
    """How the audit names a decision that did not run its call: an expiry (agentcli's own,
    by `[approval] expire_after`: a client's claim to it is recorded as a client's), a
    person's feedback or rejection, or a rule's denial."""
    if (who, by) == ("agentcli", EXPIRED_BY):
        return "expired"
    if feedback:
        return "feedback" if who in PEOPLE else "denied"
    return "rejected"


def decider(decision: Mapping[str, Any], from_clients: bool) -> tuple[str, str]:
    """Who decided, as the audit records it. Only agentcli's own session may say a rule or
    flag did (it decides by its policy before answering); a server's client saying so is
    recorded as a client, its claim kept in `by`."""
    who, by = decision.get("who") or "person", decision.get("by") or "person"
    if from_clients and (who, by) != ("person", "person"):
        return "client", f"said {who}: {by}"[:200]
    return who, by
