"""Review decisions: the answer for one call, by a person, a flag or a rule.

The form is LangChain v1's human-in-the-loop decision, which any client of a LangGraph server
may send: `{"type": "approve"}`, `{"type": "edit", "edited_action": {"name", "args"}}`,
`{"type": "reject", "message"?}`; agentcli adds `done` (a call cut off by a crash, marked as
having run), `"always": true` on an approve (with a `"match"`: only the calls that rule
matches, policy/thread_rules.py), `"sandbox": "off"` on an approve (run a confined call
unconfined, once) and who decided (`who`, `by`). The review node still checks every decision
it receives (agent/review/node.py): these constructors are how agentcli builds them.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

DecisionType = Literal["approve", "edit", "reject", "done"]
DECISIONS: list[str] = ["approve", "edit", "reject"]
RERUN_DECISIONS: list[str] = [*DECISIONS, "done"]  # for a call a crash cut off
# a plan's task a crash cut off: its arguments held its deps' results, so it runs again as
# planned, is marked done or rejected; an edit could not know what those results were
PLAN_RERUN_DECISIONS: list[str] = ["approve", "reject", "done"]
EXPIRED_BY = "approval.expire_after"  # the setting that denies a review left too long
UNCHANGED = "the edit changes nothing; approve the call instead"  # an edit that is no edit


class EditedAction(TypedDict):
    name: str
    args: dict[str, Any]


class Decision(TypedDict):
    type: DecisionType
    message: NotRequired[str]
    edited_action: NotRequired[EditedAction]
    always: NotRequired[bool]  # approve this tool for the rest of the thread
    match: NotRequired[str]  # with always: only its calls this rule's match fits (`git *`)
    sandbox: NotRequired[Literal["off"]]  # approve a confined call to run unconfined, once
    who: NotRequired[str]  # person or policy
    by: NotRequired[str]  # the rule, flag or client that decided


class Decide:
    """The decisions agentcli builds: `Decide.approve(by=...)`, `Decide.reject(message)`..."""

    @staticmethod
    def approve(
        *,
        always: bool = False,
        match: str | None = None,
        unconfined: bool = False,
        who: str | None = None,
        by: str | None = None,
    ) -> Decision:
        decision: Decision = {"type": "approve"}
        if always:
            decision["always"] = True
            if match is not None:  # scoped: the calls of this tool the match fits
                decision["match"] = match
        if unconfined:  # run outside the sandbox, this once
            decision["sandbox"] = "off"
        return _signed(decision, who, by)

    @staticmethod
    def reject(
        message: str | None = None, *, who: str | None = None, by: str | None = None
    ) -> Decision:
        """A rejection; with a message, the model reads it instead of a result (feedback)."""
        decision: Decision = {"type": "reject"}
        if message:
            decision["message"] = message
        return _signed(decision, who, by)

    @staticmethod
    def edit(name: str, args: dict[str, Any], *, by: str | None = None) -> Decision:
        return _signed({"type": "edit", "edited_action": {"name": name, "args": args}}, None, by)

    @staticmethod
    def expired(message: str) -> Decision:
        """A call whose review waited longer than `[approval] expire_after`: denied by
        agentcli (audited as "expired"), the model reading `message`."""
        return Decide.reject(message, who="agentcli", by=EXPIRED_BY)

    @staticmethod
    def done(*, by: str | None = None) -> Decision:
        """A cut-off call marked as having run: it does not run again."""
        return _signed({"type": "done"}, None, by)


def _signed(decision: Decision, who: str | None, by: str | None) -> Decision:
    if who is not None:
        decision["who"] = who
    if by is not None:
        decision["by"] = by
    return decision
