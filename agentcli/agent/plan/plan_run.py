"""An approved plan run as a graph: waves of ready tasks, then one result for the model.

The approve node leaves the plan in the `plan` channel, sealed: each task's tool, the
arguments the person approved (edits included), its deps and its state. Each time the
agent node runs while the plan's call has no result, `advance` reads the results of the
tasks that ran (`plan_results`, each sealed by the tools node) and sends every task whose
deps are all done, at once, as one group of the executor (agent/executor.py): side by
side, each its own tools task (journalled, confined and saved on its own, so a crash
re-runs only the unfinished ones), the group snapshotted for undo as a whole.
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

from agentcli_tools.plurals import counted
from langchain_core.messages import AIMessage, RemoveMessage, ToolCall, ToolMessage
from langgraph.types import Overwrite

from agentcli.agent.executor import Job, dispatch
from agentcli.agent.plan.plan_task import (
    DONE,
    FAILED,
    REFUSED,
    SKIPPED,
    result_parts,
    value,
)
from agentcli.audit.records import audit_record
from agentcli.events import PLAN, PLAN_RESULTS
from agentcli.threads.store_key import ApprovalKey

APPROVED, RUNNING, DROPPED = "approved", "running", "dropped"
FINISHED = (DONE, FAILED, DROPPED, SKIPPED, REFUSED)
ALTERED = "not run: the plan's state was changed from outside agentcli's review"
LEFT = "not run: the plan was stopped, and a new message came before this task ran"


def seal_plan(
    key: ApprovalKey, thread_id: str, plan: Mapping[str, Any], step: int
) -> dict[str, Any]:
    """The plan sealed for `step`, the step of the agent task that reads it next: the
    approve node's next step, or the one after the tools step a wave runs at. Steps only
    grow along a thread, so a sealed plan written back later (a task's state from before it
    ran) is not believed, and its tasks do not run again."""
    body = {k: v for k, v in plan.items() if k != "seal"}
    return {**body, "seal": key.seal("plan", thread_id, step, body)}


def plan_sealed(key: ApprovalKey, thread_id: str, plan: Any, step: int) -> bool:
    if not isinstance(plan, Mapping):
        return False
    body = {k: v for k, v in plan.items() if k != "seal"}
    return key.check(plan.get("seal"), "plan", thread_id, step, body)


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
    checkpoint: str | None = None,
) -> dict[str, Any] | None:
    """The next move of the plan under way: {"update", "goto"}; None when no plan is.
    `allowed`: the thread's sealed `A` rules, for the policy's second look at a task whose
    arguments get results (plan_task.py); `checkpoint`: the one this step started from."""
    found = pending_plan_call(state.get("messages", []))
    plan = state.get("plan")
    if found is None or not isinstance(plan, Mapping):
        return None
    message, call = found
    if plan.get("run") != run_of(message, call):
        return None  # a plan of another turn: the thread moved on
    if later := _after(state.get("messages", []), message):  # the person moved on
        return _left(call, later, state.get("plan_results") or {}, key, thread_id, plan["run"])
    if not plan_sealed(key, thread_id, plan, step):
        return _joined(call, [], ALTERED)
    tasks = [dict(t) for t in plan["tasks"]]
    _collect(tasks, state.get("plan_results") or {}, key, thread_id, plan["run"])
    audit: list[dict[str, Any]] = []
    jobs = _ready(tasks, plan["run"], audit, allowed)
    if jobs:
        sends, batch = dispatch(ctx, key, thread_id, step, plan["run"], jobs, (), checkpoint)
        # read next by the agent task after the tools step these tasks run at
        sealed = seal_plan(key, thread_id, {**plan, "tasks": tasks}, step + 2)
        update = {"plan": sealed, "audit": audit, **({"batch": batch} if batch else {})}
        return {"update": update, "goto": sends}
    joined = _joined(call, tasks)
    joined["update"]["audit"] = audit
    return joined


def _collect(
    tasks: list[dict[str, Any]], results: Mapping[str, Any], key: Any, thread: str, run: str
) -> None:
    """The outcome of each task that was running, from its sealed result: done, failed,
    skipped or refused (plan_task.py)."""
    for task in tasks:
        if task["state"] != RUNNING:
            continue
        entry = results.get(task["call_id"])
        if not isinstance(entry, Mapping):
            task.update(state=FAILED, why="no result was saved for it")
        elif not key.check(entry.get("seal"), *result_parts(thread, run, task["call_id"], entry)):
            task.update(state=FAILED, why="its result was changed from outside agentcli")
        else:
            state = entry.get("outcome") if entry.get("outcome") in FINISHED else FAILED
            task.update(state=state, ran_args=entry.get("ran_args") or task.get("ran_args"))
            for field in ("content", "why"):
                if isinstance(entry.get(field), str):
                    task["result" if field == "content" else "why"] = entry[field]


def _ready(
    tasks: list[dict[str, Any]],
    run: str,
    audit: list[dict[str, Any]],
    allowed: Sequence[str],
) -> list[Job]:
    """The next wave: every task whose deps are all done, to run side by side. Skip those
    whose deps cannot be done."""
    by_id = {t["id"]: t for t in tasks}
    jobs: list[Job] = []
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
        part = {
            "run": run,
            "given": {str(d["id"]): value(d["tool"], d["result"]) for d in deps},
            "who": task.get("who"),
            "allowed": list(allowed),
        }
        call = {"id": task["call_id"], "name": task["tool"], "args": task["args"]}
        jobs.append(Job(call, bool(task.get("unconfined")), part))
        task.update(state=RUNNING)  # a task that needs it waits for the next wave
    return jobs


def _after(messages: Sequence[Any], turn: AIMessage) -> list[Any]:
    """What came after the plan's turn other than tool messages: a new message, sent
    while the plan was stopped (Ctrl-C, an error) with tasks left."""
    index = next((i for i, m in enumerate(messages) if m is turn), len(messages))
    return [m for m in messages[index + 1 :] if not isinstance(m, ToolMessage)]


def _left(
    call: Mapping[str, Any],
    later: list[Any],
    results: Mapping[str, Any],
    key: Any,
    thread: str,
    run: str,
) -> dict[str, Any]:
    """The plan's one result once the person moved on: the tasks that ran (their sealed
    results), the rest not run and audited so; it goes right after the plan call, before
    what came since (a tool result after a user message is a request servers refuse)."""
    tasks: list[dict[str, Any]] = []
    audit: list[dict[str, Any]] = []
    for raw in (call.get("args") or {}).get("tasks") or []:
        if not isinstance(raw, Mapping) or not isinstance(raw.get("id"), int):
            continue
        call_id = f"{call['id']}.{raw['id']}"
        task = {"id": raw["id"], "call_id": call_id, "tool": str(raw.get("tool"))}
        task |= {"args": raw.get("args"), "deps": raw.get("deps") or []}
        task |= {"state": DROPPED, "why": LEFT}
        found = results.get(call_id)
        entry: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
        sealed = key.check(entry.get("seal"), *result_parts(thread, run, call_id, entry))
        if sealed and entry.get("outcome") in (DONE, FAILED, SKIPPED, REFUSED):
            task.update(state=entry["outcome"], why=entry.get("why"))
            task["ran_args"] = entry.get("ran_args")
            if isinstance(entry.get("content"), str):
                task["result"] = entry["content"]
        else:
            audit.append(_record(task, "dismissed", "agentcli", f"plan: {LEFT}"))
        tasks.append(task)
    joined = _joined(call, tasks)
    [reply] = joined["update"]["messages"]
    moved = [RemoveMessage(id=m.id) for m in later]
    joined["update"].update(messages=[*moved, reply, *later], audit=audit)
    return joined


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
    lines = [f"{PLAN_RESULTS} ({counted(len(tasks), 'task')}):"]
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
