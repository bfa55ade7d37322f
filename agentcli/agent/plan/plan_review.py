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
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.graph import END
from langgraph.runtime import Runtime
from langgraph.types import Command

from agentcli.agent.model.storable_calls import UNKEPT
from agentcli.agent.plan.plan_check import Plan, read_plan
from agentcli.agent.plan.plan_decisions import decided_plan, denied_reasons
from agentcli.agent.plan.plan_run import pending_plan_call
from agentcli.agent.plan.plan_tool import planning
from agentcli.agent.review.answers import ask, checked
from agentcli.agent.review.approval_seals import (
    allowed_tools,
    review_sealed,
    seal_review,
    step_of,
    thread_of,
)
from agentcli.agent.review.hook_checks import weigh
from agentcli.agent.review.interrupt_payload import review_request
from agentcli.agent.review.node import Turn
from agentcli.agent.review.pending_calls import vet
from agentcli.agent.review.precheck import precondition
from agentcli.agent.state import AgentState, RunContext
from agentcli.agent.toolset.sandboxing import unconfined_rule, would_confine
from agentcli.events import PLAN
from agentcli.hooks.decision_notes import STREAM_KEY
from agentcli.threads.store_key import key_of
from agentcli.undo.around_calls import review_note

ONLY_CALL = "a plan call must be the only call of its turn: put every step in the plan"


def plans_this_turn(messages: Sequence[BaseMessage]) -> int:
    """How many plans the model made since the person's last message."""
    count = 0
    for message in reversed(messages):
        if isinstance(message, HumanMessage):
            break
        if isinstance(message, AIMessage):
            count += any(call["name"] == PLAN for call in message.tool_calls)
    return count


def _as_planned(args: dict[str, Any]) -> str:
    return "a task of a plan runs with the arguments planned"


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
            # the person's PreToolUse hooks too (hook_checks.py); a task keeps its planned
            # arguments: a hook's updatedInput denies it (the person reviewed the plan)
            verdict = weigh(ctx, task_call, allowed, thread, _as_planned)
            for record in verdict.decided:  # what each hook decided, for scripts
                runtime.stream_writer({STREAM_KEY: record})
            if verdict.decision == "allow":
                rule = (
                    unconfined_rule(ctx.policy.rules, task.tool, task.args)
                    if verdict.policy and would_confine(ctx, task.tool)
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
            undo=lambda call: review_note(ctx, would_confine(ctx, call["name"]), call),
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
        return decided_plan(ctx, asked_at, message, call, plan, pending, review, decisions)

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
        error = str(bad.get("error") or "")
        why = error if error.startswith(UNKEPT) else "not valid JSON"
        turn.invalid(bad.get("id"), bad.get("name") or "unknown", bad.get("args"), why)
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
    denied = denied_reasons(review)
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
