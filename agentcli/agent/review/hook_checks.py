"""PreToolUse hooks in the review: what the person's hooks say of a call, weighed with the
policy (agentcli/hooks/ runs them; this decides with what they said).

Order, strongest first:
1. the policy denies the call (a flag, the config's deny list, a deny rule): denied;
2. a hook denies it (exit 2, `permissionDecision: "deny"`): denied, the hook's reason told
   to the model;
3. an ask rule (or a deny rule that may match a part it cannot read): asked;
4. a hook asks, or a hook failed (timed out, could not start, answered what is not its
   protocol): asked, and a run with flags cannot answer it (the review's `hook` note);
5. the policy allows it (a flag, an allow rule, `A`, a mode): allowed by the policy, which
   alone may run it unconfined (a rule's `sandbox = "off"`);
6. a hook allows it: allowed by the hook, always confined;
7. else the policy's verdict (asked by default).

A hook's `updatedInput` replaces the arguments (read back to agentcli's names:
hooks/tool_names.py) before the policy decides, so the policy judges what will run; it must
fit the tool's schema, or the call is denied. A call whose arguments a hook changed is asked
with the change shown, unless it is allowed by 5 or 6; the audit keeps the model's arguments
and those that ran.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from agentcli.agent.review.mode_checks import held
from agentcli.hooks.decision_notes import decisions
from agentcli.hooks.hook_set import hook_label
from agentcli.hooks.replies import HookReply
from agentcli.hooks.tool_names import agentcli_input, claude_input, claude_name

HOOK = "hook"  # the audit's `who` for a hook's decision


@dataclass(frozen=True)
class Weighed:
    """The review's verdict on one call: `decision`, who and by (for the audit), `refusal`
    (what the model reads when denied), `reason` (why it is asked), `args` (those that
    would run), `note` (what the person is shown of the hooks), `policy` (the policy itself
    allowed it: a rule may run it unconfined)."""

    decision: str
    who: str
    by: str
    args: dict[str, Any]
    refusal: str = ""
    reason: str = ""
    note: str = ""
    policy: bool = False
    told: tuple[str, ...] = ()  # what hooks said for the person, whatever was decided
    decided: tuple[dict[str, Any], ...] = ()  # each hook's decision (decision_notes.py)


def weigh(
    ctx: Any,
    call: Mapping[str, Any],
    allowed: Iterable[str],
    thread: str,
    problem: Callable[[dict[str, Any]], str | None],
) -> Weighed:
    """The verdict on a valid call; `problem`: why arguments do not fit the tool, or None."""
    name, args = call["name"], dict(call["args"])
    replies = _asked(ctx, call, thread)
    said = _said(replies)
    told = tuple(f"{hook_label(r.command)}: {r.message}" for r in replies if r.message)
    weighed = _weighed(ctx, name, args, allowed, said, problem)
    decided = tuple(decisions("PreToolUse", replies, dict(call)))
    return replace(weighed, told=told, decided=decided)


def hooks_said(ctx: Any, call: Mapping[str, Any], thread: str) -> tuple[Said, list[dict[str, Any]]]:
    """What the PreToolUse hooks say of the call, as one (no policy), and each hook's
    decision: for a plan's task once its deps' results are put in (plan/plan_task.py)."""
    replies = _asked(ctx, call, thread)
    return _said(replies), decisions("PreToolUse", replies, dict(call))


def _asked(ctx: Any, call: Mapping[str, Any], thread: str) -> list[HookReply]:
    """The replies of the PreToolUse hooks that select the call, in order."""
    hooks = getattr(ctx, "hooks", None)
    if hooks is None or not hooks.has("PreToolUse"):
        return []
    name = call["name"]
    fields = {
        "tool_name": claude_name(name),
        "tool_input": claude_input(name, dict(call["args"]), ctx.workspace),
        "tool_use_id": call.get("id"),
    }
    return list(
        hooks.run(
            "PreToolUse",
            fields,
            thread=thread,
            workspace=ctx.workspace,
            mode=ctx.policy.mode,
            tool=name,
        )
    )


def _weighed(
    ctx: Any,
    name: str,
    args: dict[str, Any],
    allowed: Iterable[str],
    said: Said,
    problem: Callable[[dict[str, Any]], str | None],
) -> Weighed:
    if said.decision != "deny" and said.updated is not None:
        new = agentcli_input(name, said.updated, args, ctx.workspace)
        if new != args:
            if why := problem(new):
                refusal = f"denied by {said.by}: its updatedInput does not fit {name}: {why}"
                return Weighed("deny", HOOK, said.by, args, refusal=refusal)
            said.notes.append(f"{said.by} changed the arguments from {_json(args)}")
            args = new
    verdict = ctx.policy.decide(name, args, list(allowed), workspace=ctx.workspace)
    verdict = held(ctx, name, args, verdict)
    note = "\n".join(said.notes)
    if verdict.decision == "deny":
        return Weighed("deny", verdict.who, verdict.by, args, refusal=verdict.refusal)
    if said.decision == "deny":
        refusal = f"denied by {said.by}" + (f": {said.reason}" if said.reason else "")
        return Weighed("deny", HOOK, said.by, args, refusal=refusal + ": this call was not run")
    if verdict.decision == "ask" and verdict.by != "default":
        return Weighed("ask", verdict.who, verdict.by, args, reason=verdict.reason, note=note)
    if said.decision == "ask":
        return Weighed("ask", HOOK, said.by, args, reason=f"asked by {said.by}", note=note)
    if verdict.decision == "allow":
        return Weighed("allow", verdict.who, verdict.by, args, note=note, policy=True)
    if said.decision == "allow":
        return Weighed("allow", HOOK, said.by, args, note=note)
    decision, who, by = verdict.decision, verdict.who, verdict.by
    return Weighed(decision, who, by, args, reason=verdict.reason, note=note)


@dataclass
class Said:
    """The hooks' replies as one (`by`: the hook that decided, or whose update it is)."""

    decision: str | None = None
    by: str = ""
    reason: str = ""
    updated: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)


def _said(replies: list[HookReply]) -> Said:
    """The hooks' replies as one: deny beats ask (a failed hook asks) beats allow; the
    person is shown each hook's reason and each failure."""
    out = Said()
    rank = {"deny": 3, "ask": 2, "allow": 1}
    updates = []
    for reply in replies:
        label = hook_label(reply.command)
        decision = "ask" if reply.failed else reply.decision
        reason = f"it failed ({reply.failed})" if reply.failed else reply.reason
        if reply.failed or (decision in ("ask", "deny") and reason):
            out.notes.append(f"{label}: {reason}")
        if decision in rank and rank[decision] > rank.get(out.decision or "", 0):
            out.decision, out.by, out.reason = decision, label, reason
        if reply.updated is not None and decision in ("allow", "ask", None):
            updates.append((label, reply.updated))
    if len({_json(u) for _, u in updates}) > 1:
        out.notes.append("hooks changed the arguments in different ways: none of them is used")
        if (out.decision or "") != "deny":
            out.decision, out.by = "ask", updates[0][0]
            out.reason = "hooks disagree on the arguments"
    elif updates:
        out.updated = updates[0][1]
        out.by = out.by or updates[0][0]
    return out


def _json(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    return text if len(text) <= 500 else text[:499] + "…"
