"""An approved plan run as a graph: waves of ready tasks, then one result for the model.

The approve node leaves the plan in the `plan` channel, sealed: each task's tool, the
arguments the person approved (edits included), its deps and its state. Each time the
agent node runs while the plan's call has no result, `advance` reads the results of the
tasks that ran (`plan_results`, each sealed by the tools node) and sends every task whose
deps are all done to the tools node, at once, each its own task (so each is journalled,
snapshotted, confined and saved on its own, and a crash re-runs only the unfinished ones).
A task's arguments get its deps' results at that moment (substitution.py); when they
change, the policy decides again: a deny rule refuses the task, and a task a rule (not a
person) allowed runs only if a rule still allows it. A failed task stops the tasks that
need it. Once nothing is left to run, the plan call gets one tool message with every
task's outcome (`join`), which is what the model reads.

The channels are written only by agentcli's own nodes, but any client of a LangGraph
server can write them too: a plan whose seal does not match, or a result whose seal does
not, is not believed (the plan is refused; the result counts as missing).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, ToolCall, ToolMessage
from langgraph.types import Overwrite, Send

from agentcli.agent.plan import PLAN, PLAN_RESULTS
from agentcli.agent.plan.substitution import substitute
from agentcli.agent.review.approval_seals import ApprovalKey, seal_call
from agentcli.agent.review.audit_records import PEOPLE, audit_record

APPROVED, RUNNING, DONE, FAILED = "approved", "running", "done", "failed"
DROPPED, SKIPPED, REFUSED = "dropped", "skipped", "refused"
FINISHED = (DONE, FAILED, DROPPED, SKIPPED, REFUSED)
ALTERED = "not run: the plan's state was changed from outside agentcli's review"
SHELL_OK = "exit code 0"


def seal_plan(key: ApprovalKey, thread_id: str, plan: Mapping[str, Any]) -> dict[str, Any]:
    body = {k: v for k, v in plan.items() if k != "seal"}
    return {**body, "seal": key.seal("plan", thread_id, body)}


def plan_sealed(key: ApprovalKey, thread_id: str, plan: Any) -> bool:
    if not isinstance(plan, Mapping):
        return False
    body = {k: v for k, v in plan.items() if k != "seal"}
    return key.check(plan.get("seal"), "plan", thread_id, body)


def _result_parts(thread_id: str, run: str, call_id: str, entry: Any) -> tuple[Any, ...]:
    return ("plan-result", thread_id, run, call_id, entry.get("status"), entry["content"])


def pending_plan_call(messages: Sequence[Any]) -> tuple[AIMessage, dict[str, Any]] | None:
    """The model's last turn and its `plan` call, when that call has no result yet."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if isinstance(message, AIMessage):
            calls = [c for c in message.tool_calls if c["name"] == PLAN]
            if not calls:
                return None
            answered = {m.tool_call_id for m in messages[index + 1 :] if isinstance(m, ToolMessage)}
            return (message, dict(calls[0])) if calls[0]["id"] not in answered else None
    return None


def running_calls(values: Mapping[str, Any]) -> list[ToolCall]:
    """The calls of the plan's tasks sent to run (what a crash may have cut off)."""
    plan = values.get("plan")
    tasks = plan.get("tasks") if isinstance(plan, Mapping) else None
    return [
        {"id": t["call_id"], "name": t["tool"], "args": t.get("ran_args") or t["args"]}
        for t in tasks or []
        if isinstance(t, Mapping) and t.get("state") == RUNNING
    ]


def run_of(message: AIMessage, call: Mapping[str, Any]) -> str:
    """What binds a plan's state and results to one model turn (its message id and call)."""
    return f"{message.id}/{call['id']}"


def advance(
    state: Mapping[str, Any],
    ctx: Any,
    key: ApprovalKey,
    thread_id: str,
    step: int,
    allowed: Sequence[str] = (),
) -> dict[str, Any] | None:
    """The next move of the plan under way: {"update", "goto"}; None when no plan is.
    `allowed`: the thread's sealed `A` rules, for the policy's second look."""
    found = pending_plan_call(state.get("messages", []))
    plan = state.get("plan")
    if found is None or not isinstance(plan, Mapping):
        return None
    message, call = found
    if plan.get("run") != run_of(message, call):
        return None  # a plan of another turn: the thread moved on
    if not plan_sealed(key, thread_id, plan):
        return _joined(call, [], ALTERED)
    tasks = [dict(t) for t in plan["tasks"]]
    _collect(tasks, state.get("plan_results") or {}, key, thread_id, plan["run"])
    audit: list[dict[str, Any]] = []
    sends = _ready(tasks, ctx, key, thread_id, step, plan["run"], audit, allowed)
    if sends:
        update = {"plan": seal_plan(key, thread_id, {**plan, "tasks": tasks}), "audit": audit}
        return {"update": update, "goto": sends}
    joined = _joined(call, tasks)
    joined["update"]["audit"] = audit
    return joined


def _collect(
    tasks: list[dict[str, Any]], results: Mapping[str, Any], key: Any, thread: str, run: str
) -> None:
    """The outcome of each task that was running: its sealed result, or failed."""
    for task in tasks:
        if task["state"] != RUNNING:
            continue
        entry = results.get(task["call_id"])
        if not isinstance(entry, Mapping) or not isinstance(entry.get("content"), str):
            task.update(state=FAILED, why="no result was saved for it")
        elif not key.check(entry.get("seal"), *_result_parts(thread, run, task["call_id"], entry)):
            task.update(state=FAILED, why="its result was changed from outside agentcli")
        else:
            ok = entry.get("status") != "error" and _shell_ok(task["tool"], entry["content"])
            task.update(state=DONE if ok else FAILED, result=entry["content"])


def _shell_ok(tool: str, content: str) -> bool:
    """A shell task failed when its command did (a non-zero exit, a timeout)."""
    return tool != "shell" or content.split("\n", 1)[0] == SHELL_OK


def value(task: Mapping[str, Any]) -> str:
    """What `$N` stands for: the task's result; a shell command's output without its status."""
    result = str(task.get("result", ""))
    if task["tool"] == "shell":
        result = result.split("\n", 1)[1] if "\n" in result else ""
        return "" if result == "(no output)" else result
    return result


def _ready(
    tasks: list[dict[str, Any]],
    ctx: Any,
    key: ApprovalKey,
    thread: str,
    step: int,
    run: str,
    audit: list[dict[str, Any]],
    allowed: Sequence[str],
) -> list[Send]:
    """Send every task whose deps are done; skip those whose deps cannot be."""
    by_id = {t["id"]: t for t in tasks}
    sends: list[Send] = []
    for task in tasks:  # in order: deps come first
        if task["state"] != APPROVED:
            continue
        deps = [by_id[d] for d in task["deps"]]
        blocked = next((d for d in deps if d["state"] in FINISHED and d["state"] != DONE), None)
        if blocked:
            task.update(state=SKIPPED, why=f"task {blocked['id']} {_outcome(blocked)}")
            audit.append(_record(task, "skipped", "agentcli", f"plan: {task['why']}"))
            continue
        if any(d["state"] != DONE for d in deps):
            continue
        args = substitute(task["tool"], task["args"], {d["id"]: value(d) for d in deps})
        if args != task["args"] and (refusal := _refused(task, args, ctx, audit, allowed)):
            task.update(state=REFUSED, why=refusal, ran_args=args)
            continue
        call = {"id": task["call_id"], "name": task["tool"], "args": args}
        unconfined = bool(task.get("unconfined"))
        payload = {
            "__type": "tool_call_with_context",
            "tool_call": call,
            "state": {},
            "approval": seal_call(key, thread, step + 1, call, unconfined, plan=run),
            "plan": run,
            **({"sandbox": "off"} if unconfined else {}),
        }
        sends.append(Send("tools", payload))
        task.update(state=RUNNING, ran_args=args)
        if args != task["args"]:  # what ran, as the audit keeps it
            audit.append(
                _record(task, "substituted", "agentcli", "plan: deps' results", ran_args=args)
            )
    return sends


def _refused(
    task: Mapping[str, Any], args: dict[str, Any], ctx: Any, audit: list, allowed: Sequence[str]
) -> str | None:
    """Why a task whose arguments now hold results may not run, or None: a deny rule on
    what it would run wins, and what a rule allowed must still be allowed by one."""
    policy = getattr(ctx, "policy", None)
    if policy is None:
        return None
    verdict = policy.decide(task["tool"], args, allowed, workspace=getattr(ctx, "workspace", None))
    if verdict.decision == "deny":
        audit.append(_record(task, "denied", verdict.who, verdict.by, ran_args=args))
        return f"denied once its deps' results were put in: {verdict.refusal}"
    if task.get("who") not in PEOPLE and verdict.decision != "allow":
        why = "the rule that allowed it does not allow it with its deps' results put in"
        audit.append(_record(task, "refused", "agentcli", why, ran_args=args))
        return f"{why}; a person must review it (call plan again)"
    return None


def _record(task: Mapping[str, Any], decision: str, who: str, by: str, **extra: Any) -> dict:
    call = {"id": task["call_id"], "name": task["tool"], "args": task["args"]}
    return audit_record(call, decision, who, by, **extra)


def _outcome(task: Mapping[str, Any]) -> str:
    return {FAILED: "failed", DROPPED: "was dropped", SKIPPED: "did not run"}.get(
        task["state"], "was refused"
    )


def _joined(call: Mapping[str, Any], tasks: list[dict[str, Any]], refused: str = "") -> dict:
    """The plan call's one tool message: every task's outcome, for the model and the
    transcript (`artifact`), and the plan's channels emptied."""
    text = refused or outcome_text(tasks)
    failed = bool(refused) or not any(t["state"] == DONE for t in tasks)
    shown = [
        {k: t.get(k) for k in ("id", "tool", "args", "ran_args", "deps", "state", "why")}
        for t in tasks
    ]
    message = ToolMessage(
        text,
        tool_call_id=call["id"],
        name=PLAN,
        status="error" if failed else "success",
        artifact={"plan": shown},
    )
    update = {"messages": [message], "plan": None, "plan_results": Overwrite({})}
    return {"update": update, "goto": "agent"}


def outcome_text(tasks: Sequence[Mapping[str, Any]]) -> str:
    lines = [f"{PLAN_RESULTS} ({len(tasks)} tasks):"]
    for task in tasks:
        args = json.dumps(task.get("ran_args") or task["args"], ensure_ascii=False)
        head = f"Task {task['id']} {task['tool']} {args}"
        if task["state"] == DONE:
            lines.append(f"{head}: done\n{task.get('result', '')}")
        elif task["state"] == FAILED and "result" in task:
            lines.append(f"{head}: failed\n{task['result']}")
        else:
            lines.append(f"{head}: not run: {task.get('why') or task['state']}")
    return "\n\n".join(lines)


def result_entry(
    key: ApprovalKey, thread_id: str, run: str, message: ToolMessage
) -> dict[str, dict[str, Any]]:
    """A plan task's tool message as its sealed entry in `plan_results`."""
    entry: dict[str, Any] = {
        "status": "error" if message.status == "error" else "ok",
        "content": message.text,
        "name": message.name,
    }
    entry["seal"] = key.seal(*_result_parts(thread_id, run, message.tool_call_id, entry))
    return {message.tool_call_id: entry}
