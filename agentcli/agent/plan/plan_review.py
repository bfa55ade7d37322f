"""A plan's review: checked like a call, decided per task, asked in one interrupt.

The review and approve nodes hand a turn to these when it is a `plan` call in plan mode
(graph.py). `review` checks the plan (plan_check.py, and each task's preconditions) and
applies the policy to each task: deny always wins, allow rules let their tasks through, the
rest are asked. `approve` asks them in one human-in-the-loop interrupt, one action request
per task, with the whole plan in the payload (`plan`) for the person to see. Per task, an
approve runs it, an edit runs it with the person's arguments, a reject drops it and every
task that needs it; a reject with a message is feedback: nothing runs, and the model reads
the feedback to plan again. The approved plan goes to the `plan` channel, sealed, for the
agent node to run (plan_run.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.graph import END
from langgraph.runtime import Runtime
from langgraph.types import Command, Overwrite

from agentcli.agent.plan import PLAN
from agentcli.agent.plan.plan_check import Plan, Task, read_plan
from agentcli.agent.plan.plan_run import APPROVED, DROPPED, pending_plan_call, run_of, seal_plan
from agentcli.agent.plan.plan_tool import planning
from agentcli.agent.review.answers import ask, checked
from agentcli.agent.review.approval_seals import (
    allowed_tools,
    key_of,
    review_sealed,
    seal_review,
    seal_tool,
    step_of,
    thread_of,
)
from agentcli.agent.review.audit_records import PEOPLE, audit_record, decider, refusal_kind
from agentcli.agent.review.node import Turn, review_request
from agentcli.agent.review.pending_calls import vet
from agentcli.agent.review.preconditions import precondition
from agentcli.agent.state import AgentState, RunContext
from agentcli.agent.toolset.sandboxing import UNCONFINED, unconfined_rule, would_confine
from agentcli.agent.undo_snapshots import review_note
from agentcli.policy.thread_rules import scoped_entry

ONLY_CALL = "a plan call must be the only call of its turn: put every step in the plan"
FEEDBACK = "The person sent the plan back; nothing ran. Their feedback:"
EXPIRED = "The plan's review expired; nothing ran:"


def plans_this_turn(messages: Sequence[BaseMessage]) -> int:
    """How many plans the model made since the person's last message."""
    count = 0
    for message in reversed(messages):
        if isinstance(message, HumanMessage):
            break
        if isinstance(message, AIMessage):
            count += any(call["name"] == PLAN for call in message.tool_calls)
    return count


def make_plan_nodes(tools: Sequence[BaseTool]):  # noqa: ANN201 - two node halves
    """The plan's side of the review and approve nodes: each returns None for a turn that
    is not a plan, which the usual node then reviews."""
    by_name = {tool.name: tool for tool in tools}

    def review(
        state: AgentState, runtime: Runtime[RunContext], config: RunnableConfig
    ) -> Command | None:
        found = _plan_turn(state)
        if found is None:
            return None
        message, call = found
        ctx = runtime.context
        key, thread = key_of(ctx), thread_of(config)
        turn = Turn()
        plan = _checked(message, call, state, ctx, turn, by_name)
        if plan is None:
            invalid = any(r["decision"] == "invalid" for r in turn.audit)
            invalid_turns = state.get("invalid_turns", 0) + 1 if invalid else 0
            goto = END if invalid_turns >= ctx.max_invalid_turns else "agent"
            return Command(update=turn.update(invalid_turns=invalid_turns), goto=goto)
        allowed = allowed_tools(key, thread, state)
        passed: list[Any] = []
        asking: list[dict[str, Any]] = []
        denied: list[dict[str, Any]] = []
        lifted: list[str] = []
        for task in plan.by_id:
            task_call = task.call(call["id"])
            verdict = ctx.policy.decide(task.tool, task.args, allowed, workspace=ctx.workspace)
            if verdict.decision == "allow":
                rule = (
                    unconfined_rule(ctx.policy.rules, task.tool, task.args)
                    if would_confine(ctx, task.tool)
                    else None
                )
                extra = {"sandbox": f"off (by {rule})"} if rule else {}
                turn.note(task_call, "allowed", verdict.who, verdict.by, **extra)
                passed.append(task_call)
                lifted += [task.call_id(call["id"])] if rule else []
            elif verdict.decision == "deny":
                turn.note(task_call, "denied", verdict.who, verdict.by)
                denied.append({"call": task_call, "reason": verdict.refusal})
            else:
                asking.append({"call": task_call, "reason": verdict.reason})
        step = step_of(config) + 1
        sealed = seal_review(key, thread, step, passed, asking, lifted, denied=denied)
        update = turn.update(invalid_turns=0, review=sealed)
        return Command(update=update, goto="approve")

    def approve(
        state: AgentState, runtime: Runtime[RunContext], config: RunnableConfig
    ) -> Command | None:
        found = _plan_turn(state)
        if found is None:
            return None
        message, call = found
        ctx = runtime.context
        key, thread, step = key_of(ctx), thread_of(config), step_of(config)
        plan = read_plan(call["args"], by_name)
        review = state.get("review")
        if isinstance(plan, str) or not review_sealed(key, thread, step, review):
            review = None  # nothing is believed: every task is refused
        plan = plan if isinstance(plan, Plan) else Plan(())
        calls = [task.call(call["id"]) for task in plan.by_id]
        pending = vet(review, AIMessage("", tool_calls=calls), set())
        asking = pending.asking
        confined = {c["id"] for c, _ in asking if would_confine(ctx, c["name"])}
        request = review_request(
            asking,
            sandbox=lambda c: ctx.sandbox.label() if c["id"] in confined else None,
            undo=partial(review_note, ctx),
        )
        request["plan"] = plan_view(plan, call["id"], pending, review)
        _describe_tasks(request, plan)
        asked = [c for c, _ in asking]
        decisions = (
            ask(request, lambda a: checked(a, asked, by_name, context=ctx, confined=confined))
            if asking
            else []
        )
        asked_at = (key, thread, step)
        return _decided(state, ctx, asked_at, message, call, plan, pending, review, decisions)

    return review, approve


def _plan_turn(state: Any) -> tuple[AIMessage, dict[str, Any]] | None:
    """The model's plan call waiting for review, in a turn that is in plan mode."""
    messages = state["messages"]
    found = pending_plan_call(messages)
    return found if found is not None and planning(messages) else None


def _checked(
    message: AIMessage,
    call: Mapping[str, Any],
    state: Any,
    ctx: RunContext,
    turn: Turn,
    by_name: Mapping[str, BaseTool],
) -> Plan | None:
    """The plan, or None with what went wrong in `turn` (for the model)."""
    for bad in message.invalid_tool_calls:
        turn.invalid(bad.get("id"), bad.get("name") or "unknown", bad.get("args"), "not valid JSON")
    # with another call beside it, even one whose arguments are not JSON, the plan is not
    # reviewed: it gets its own reply (else it would be settled as a dismissed review)
    if len(message.tool_calls) > 1 or message.invalid_tool_calls:
        for other in message.tool_calls:
            turn.invalid(other["id"], other["name"], other["args"], ONLY_CALL)
        return None
    if plans_this_turn(state["messages"]) > 1 + ctx.max_replans:
        why = (
            f"not run: this is plan {plans_this_turn(state['messages'])} since the person's"
            f" message, and [plan] max_replans is {ctx.max_replans}; answer with what you have"
        )
        turn.refuse(call, "refused", "agentcli", "plan.max_replans", why)  # type: ignore[arg-type]
        return None
    plan = read_plan(call["args"], by_name)
    if isinstance(plan, str):
        turn.invalid(call["id"], PLAN, call["args"], f"invalid plan: {plan}")
        return None
    for task in plan.tasks:
        if problem := precondition(by_name[task.tool], task.args, ctx):
            turn.invalid(call["id"], PLAN, call["args"], f"task {task.id} ({task.tool}): {problem}")
            return None
    return None if turn.audit else plan


def plan_view(plan: Plan, call_id: str, pending: Any, review: Any) -> list[dict[str, Any]]:
    """The whole plan as the review shows it: each task, its deps, and what decides it."""
    allowed = {c["id"] for c in pending.allowed}
    asking = {c["id"]: reason for c, reason in pending.asking}
    denied = _denied_reasons(review)
    view = []
    for task in plan.by_id:
        task_call_id = task.call_id(call_id)
        if task_call_id in allowed:
            verdict, why = "allowed", "allowed by the policy"
        elif task_call_id in asking:
            verdict, why = "ask", asking[task_call_id]
        else:
            verdict, why = "denied", denied.get(task_call_id, "not allowed to run")
        view.append(
            {
                "id": task.id,
                "call_id": task_call_id,
                "tool": task.tool,
                "args": task.args,
                "deps": list(task.deps),
                "verdict": verdict,
                "reason": why,
            }
        )
    return view


def _describe_tasks(request: dict[str, Any], plan: Plan) -> None:
    """Each action request says which task of the plan it is and what it needs first
    (extra keys a v1 HITL client passes by; its description is what such a client shows)."""
    tasks = {task.id: task for task in plan.tasks}
    for action in request["action_requests"]:
        task = tasks[int(str(action["id"]).rsplit(".", 1)[1])]
        after = f", after task {', '.join(map(str, task.deps))}" if task.deps else ""
        action["plan_task"], action["deps"] = task.id, list(task.deps)
        action["description"] = (
            f"Plan task {task.id} of {len(tasks)}{after}: {action['description']}"
        )


def _denied_reasons(review: Any) -> dict[str, str]:
    entries = review.get("denied") if isinstance(review, Mapping) else None
    reasons: dict[str, str] = {}
    for entry in entries if isinstance(entries, list) else []:
        call = entry.get("call") if isinstance(entry, Mapping) else None
        if isinstance(call, Mapping) and isinstance(entry.get("reason"), str):
            reasons[str(call.get("id"))] = entry["reason"]
    return reasons


def _decided(
    state: Any,
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
    allowed = allowed_tools(key, thread, state)
    audit: list[dict[str, Any]] = []
    outcome: dict[str, dict[str, Any]] = {}  # task call id -> who, args, state, why
    lifted = set(review.get("unconfined") or []) if isinstance(review, Mapping) else set()
    dropped = {i: f"denied: {why}" for i, why in _denied_reasons(review).items()}
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
            verdict = ctx.policy.decide(task_call["name"], args, allowed, workspace=ctx.workspace)
            if verdict.decision == "deny":  # a resume may bring --deny
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
