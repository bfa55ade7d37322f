"""What a plan's decisions make of it (plan_review.py asks them): sent back with feedback
(or because its review expired), or approved for the agent node to run (plan_run.py), each
task approved with who decided and its arguments, or dropped with why; a task that needs a
dropped one is dropped too. Everything decided is audited here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from langgraph.types import Command, Overwrite

from agentcli.agent.plan.plan_check import Plan, Task
from agentcli.agent.plan.plan_run import APPROVED, DROPPED, run_of, seal_plan
from agentcli.agent.review.approval_seals import seal_tool
from agentcli.agent.state import RunContext
from agentcli.agent.toolset.sandboxing import UNCONFINED
from agentcli.audit.records import PEOPLE, audit_record, decider, refusal_kind
from agentcli.events import PLAN
from agentcli.policy.thread_rules import scoped_entry

FEEDBACK = "The person sent the plan back; nothing ran. Their feedback:"
EXPIRED = "The plan's review expired; nothing ran:"


def denied_reasons(review: Any) -> dict[str, str]:
    entries = review.get("denied") if isinstance(review, Mapping) else None
    reasons: dict[str, str] = {}
    for entry in entries if isinstance(entries, list) else []:
        call = entry.get("call") if isinstance(entry, Mapping) else None
        if isinstance(call, Mapping) and isinstance(entry.get("reason"), str):
            reasons[str(call.get("id"))] = entry["reason"]
    return reasons


def decided_plan(
    ctx: RunContext,
    asked_at: tuple[Any, str, int],
    message: AIMessage,
    call: Mapping[str, Any],
    plan: Plan,
    pending: Any,
    review: Any,
    decisions: Sequence[Mapping[str, Any]],
) -> Command:
    """The plan as decided: sent back with feedback, or left approved for the agent node
    (`asked_at`: the key, thread and step of this approve task)."""
    key, thread, step = asked_at
    audit: list[dict[str, Any]] = []
    outcome: dict[str, dict[str, Any]] = {}  # task call id -> who, args, state, why
    lifted = set(review.get("unconfined") or []) if isinstance(review, Mapping) else set()
    dropped = {i: f"denied: {why}" for i, why in denied_reasons(review).items()}
    dropped |= {c["id"]: "its review was changed from outside agentcli" for c in pending.altered}
    for task_call in pending.allowed:
        unconfined = task_call["id"] in lifted
        outcome[task_call["id"]] = {"who": "policy", "args": task_call["args"], "off": unconfined}
    feedback: list[tuple[dict[str, Any], str, str]] = []
    remember: list[str] = []
    for (task_call, _), decision in zip(pending.asking, decisions, strict=True):
        who, by = decider(decision, ctx.from_clients)
        kind = decision["type"]
        args = decision["edited_action"]["args"] if kind == "edit" else task_call["args"]
        if kind in ("approve", "edit"):
            verdict = ctx.policy.denial(task_call["name"], args, workspace=ctx.workspace)
            if verdict is not None:  # a resume may bring --deny (node.py: denied)
                audit.append(audit_record(task_call, "denied", verdict.who, verdict.by))
                dropped[task_call["id"]] = f"denied: {verdict.refusal}"
                continue
            person = "approved" if who in PEOPLE else "allowed"
            record = audit_record(
                task_call, "edited" if kind == "edit" else person, who, by, ran_args=args
            )
            off = decision.get("sandbox") == UNCONFINED
            if off:
                record["sandbox"] = "off (unconfined once, chosen at the review)"
            audit.append(record)
            outcome[task_call["id"]] = {"who": who, "args": args, "off": off}
            if decision.get("always"):
                remember.append(scoped_entry(task_call["name"], decision.get("match")))
        elif said := decision.get("message"):  # feedback, or agentcli's word it expired
            kind = refusal_kind(who, by, True)
            feedback.append((task_call, str(said), kind))
            audit.append(audit_record(task_call, kind, who, by, feedback=said))
        else:
            audit.append(audit_record(task_call, "rejected", who, by))
            dropped[task_call["id"]] = "rejected by the person"
    update: dict[str, Any] = {"review": None, "audit": audit}
    if remember:
        update["allowed_tools"] = remember
        update["allowed_seals"] = [seal_tool(key, thread, name) for name in remember]
    if feedback:
        expired = all(kind == "expired" for _, _, kind in feedback)
        lines = [f"Task {_task_of(c)} ({c['name']}): {said}" for c, said, _ in feedback]
        text = "\n".join([EXPIRED if expired else FEEDBACK, *lines])
        reply = ToolMessage(text, tool_call_id=call["id"], name=PLAN, status="error")
        return Command(update={**update, "messages": [reply]}, goto="agent")
    tasks = _states(plan, str(call["id"]), outcome, dropped, audit)
    approved = {"run": run_of(message, call), "tasks": tasks}
    plan_state = seal_plan(key, thread, approved, step + 1)  # the agent task's, next
    update |= {"plan": plan_state, "plan_results": Overwrite({})}
    return Command(update=update, goto="agent")


def _task_of(task_call: Mapping[str, Any]) -> str:
    return str(task_call["id"]).rsplit(".", 1)[-1]


def _states(
    plan: Plan,
    call_id: str,
    outcome: Mapping[str, dict[str, Any]],
    dropped: Mapping[str, str],
    audit: list,
) -> list[dict[str, Any]]:
    """Each task's state for the run: approved (with who and its arguments), or dropped
    with why; a task that needs a dropped one is dropped too, and recorded."""
    out: list[dict[str, Any]] = []
    gone: dict[int, str] = {}
    for task in plan.tasks:
        task_call = task.call(call_id)
        decided = outcome.get(task.call_id(call_id))
        entry = _entry(task, task.call_id(call_id), decided)
        if decided is None:
            why = dropped.get(task.call_id(call_id), "not approved")
            gone[task.id] = entry["why"] = why
        elif missing := next((d for d in task.deps if d in gone), None):
            entry.update(state=DROPPED, why=f"needs task {missing}, which will not run")
            gone[task.id] = entry["why"]
            audit.append(audit_record(task_call, "dropped", "agentcli", f"plan: {entry['why']}"))
        out.append(entry)
    return out


def _entry(task: Task, task_call_id: str, decided: Mapping[str, Any] | None) -> dict[str, Any]:
    if decided is None:
        return {**_base(task, task_call_id, task.args), "state": DROPPED}
    return {
        **_base(task, task_call_id, decided["args"]),
        "state": APPROVED,
        "who": decided["who"],
        "unconfined": bool(decided.get("off")),
    }


def _base(task: Task, task_call_id: str, args: Any) -> dict[str, Any]:
    return {
        "id": task.id,
        "call_id": task_call_id,
        "tool": task.tool,
        "args": args,
        "deps": list(task.deps),
    }
