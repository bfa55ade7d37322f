"""The one executor of approved calls: the calls of a model turn and the tasks of a plan.

The calls run in groups, one group per graph step: LangGraph runs the tasks of a step side
by side (a Send per call: each its own tools task, journalled and saved on its own) and
starts the next step only once all of them have ended. So the order is the groups', fixed
when the calls are approved, and no call waits for another while it runs:

- the calls of a model turn (`turn_groups`), in the model's order: reads next to each
  other form one group; a call that may change files is a group of its own, after
  everything before it; the reads after it come after it;
- the tasks of a plan (plan/plan_run.py): each wave of tasks whose deps are done is one
  group, whatever their tools (shell commands included).

`dispatch` sends a group: it snapshots the workspace first when a call of the group may
change files (undo_snapshots.py), seals each call for the tools step (it runs only with
that seal: review/approval_seals.py), and leaves the batch in the state, sealed for the
agent task that reads it next (the step after the tools step): the group running, the
snapshot before it, and a turn's groups still to run. `collect`, which the agent task runs
first, records the group for undo (one record: undo takes the group back together, and
says so) and sends a turn's next group; a plan's next wave is plan_run's to send.

Ctrl-C: the group that ran is recorded, the turn's calls left do not run and the model is
told so; the run stops at an agent task, as any run Ctrl-C stops between steps, and
`run --thread` continues it (a plan's tasks left run then). A crash: LangGraph runs the
tools step again, but not its tasks whose results were saved; a call the journal saw start
is asked about again (review/cut_off_calls.py), never run twice in silence. A batch whose
seal does not match (written by a client of a server, or left when the person sent a new
message instead of continuing a stopped run) is not believed: nothing more of it runs or
is recorded, and its calls without a result are settled as dismissed
(review/dismissed_calls.py).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from langgraph.types import Send

from agentcli.agent.review.approval_seals import seal_call
from agentcli.agent.toolset.sandboxing import UNCONFINED
from agentcli.audit.records import audit_record
from agentcli.errors import Interrupted
from agentcli.threads.store_key import ApprovalKey
from agentcli.undo.around_calls import after_group, before_group
from agentcli.undo.call_snapshots import READ_ONLY_TOOLS

STOPPED = "not run: the run was stopped (Ctrl-C) before this call's turn came"


@dataclass(frozen=True)
class Job:
    """One approved call to run: whether it runs outside the sandbox (sealed with it), and
    for a plan's task, its part of the plan (its run and the results it is given)."""

    call: dict[str, Any]
    unconfined: bool = False
    plan: dict[str, Any] | None = None


@dataclass
class Collected:
    """What `collect` makes of the batch: the agent task's update, and where the graph goes
    (None: the agent task goes on, with `update` in its own)."""

    update: dict[str, Any] = field(default_factory=dict)
    goto: Any = None


def in_order(calls: Sequence[Any], turn: Sequence[Any]) -> list[Any]:
    """`calls` in the order of the model's `turn` (the calls of its message)."""
    place = {id(call): n for n, call in enumerate(turn)}
    by_id = {call.get("id"): n for n, call in enumerate(turn)}
    return sorted(calls, key=lambda c: place.get(id(c), by_id.get(c.get("id"), len(turn))))


def turn_groups(calls: Sequence[Any]) -> list[list[Any]]:
    """The calls of a turn, in order, as the groups they run in: reads next to each other
    together, every other call alone."""
    groups: list[list[Any]] = []
    for call in calls:
        reads = groups and all(c.get("name") in READ_ONLY_TOOLS for c in groups[-1])
        if reads and call.get("name") in READ_ONLY_TOOLS:
            groups[-1].append(call)
        else:
            groups.append([call])
    return groups


def start_turn(
    ctx: Any,
    key: ApprovalKey,
    thread_id: str,
    step: int,
    message: Any,
    approved: Sequence[Any],
    unconfined: Collection[Any] = (),
    checkpoint: str | None = None,
) -> tuple[Any, dict[str, Any]]:
    """The approved calls of the model's turn `message`, sent from the node at `step` (the
    review or approve node): where the graph goes (their first group, or back to the
    model), and the batch for the update (the groups after it)."""
    if not approved:
        return "agent", {}
    calls = in_order(approved, message.tool_calls)
    groups = [[Job(c, c["id"] in unconfined) for c in group] for group in turn_groups(calls)]
    run = str(message.id or "turn")
    sends, batch = dispatch(ctx, key, thread_id, step, run, groups[0], groups[1:], checkpoint)
    return sends, {"batch": batch} if batch else {}


def dispatch(
    ctx: Any,
    key: ApprovalKey,
    thread_id: str,
    step: int,
    run: str,
    jobs: Sequence[Job],
    left: Sequence[Sequence[Job]] = (),
    checkpoint: str | None = None,
) -> tuple[list[Send], dict[str, Any] | None]:
    """Send `jobs`, one group, from the node at `step` to the tools step after it, and the
    batch to leave in the state (None: nothing to collect: no snapshot, no group left).
    `run` names what the group belongs to (the model's turn, a plan); `checkpoint`: the
    one the sending step started from, kept with the group's record."""
    before, problem = before_group(ctx, [job.call for job in jobs])
    sends = [Send("tools", _payload(key, thread_id, step + 1, job, problem)) for job in jobs]
    if before is None and not left:
        return sends, None
    body = {
        "run": run,
        "group": f"{run}@{step + 1}",
        "running": [[str(job.call["id"]), str(job.call["name"])] for job in jobs],
        "before": before,
        "checkpoint": checkpoint,
        "left": [[_kept(job) for job in group] for group in left],
    }
    return sends, _sealed(key, thread_id, step + 2, body)


def collect(
    state: Mapping[str, Any],
    ctx: Any,
    key: ApprovalKey,
    thread_id: str,
    step: int,
    checkpoint: str | None = None,
) -> Collected:
    """The batch, once its group has run (the agent task at `step` reads it first): the
    group recorded for undo, then a turn's next group sent, or its calls left not run when
    the person pressed Ctrl-C."""
    batch = state.get("batch")
    if batch is None:
        return Collected()
    update: dict[str, Any] = {"batch": None}
    if not _batch_sealed(key, thread_id, step, batch):
        return Collected(update)  # not believed: nothing of it runs or is recorded
    running = [(str(c), str(n)) for c, n in batch["running"]]
    problem = after_group(
        ctx, thread_id, batch.get("before"), running, batch.get("checkpoint"), batch["group"]
    )
    noted = _noted(state.get("messages", []), running, problem) if problem else []
    left = [[_job(kept) for kept in group] for group in batch.get("left") or []]
    if noted:
        update["messages"] = noted
    cancel = getattr(ctx, "cancel", None)
    if cancel is not None and cancel.is_set():
        if not left:  # the group is recorded (once); the run that continues collects the rest
            raise Interrupted("interrupted before the model was asked again")
        jobs = [job for group in left for job in group]  # the rest of the turn does not run
        update["messages"] = [*noted, *(_not_run(job.call, STOPPED) for job in jobs)]
        update["audit"] = [audit_record(j.call, "skipped", "agentcli", STOPPED) for j in jobs]
        return Collected(update, "agent")  # saved; the agent task then stops the run
    if not left:
        return Collected(update, "agent" if noted else None)
    sends, following = dispatch(
        ctx, key, thread_id, step, batch["run"], left[0], left[1:], checkpoint
    )
    update["batch"] = following
    return Collected(update, sends)


def _payload(key: ApprovalKey, thread_id: str, step: int, job: Job, undo: str) -> dict:
    """The tools task of one call, with its seal for the tools step `step`; `undo`: why its
    changes cannot be undone (its result says so)."""
    call = job.call
    seal = seal_call(key, thread_id, step, call, job.unconfined, plan=job.plan, undo=undo)
    return {
        "__type": "tool_call_with_context",
        "tool_call": call,
        "state": {},
        "approval": seal,
        **({"sandbox": UNCONFINED} if job.unconfined else {}),
        **({"plan": job.plan} if job.plan is not None else {}),
        **({"undo": undo} if undo else {}),
    }


def _sealed(key: ApprovalKey, thread_id: str, step: int, body: dict[str, Any]) -> dict:
    """The batch sealed for the agent task at `step`: steps only grow along a thread, so a
    batch written back later (by a client, or left by a run the person moved on from) is
    not believed, and nothing of it runs again."""
    return {**body, "seal": key.seal("batch", thread_id, step, body)}


def _batch_sealed(key: ApprovalKey, thread_id: str, step: int, batch: Any) -> bool:
    if not isinstance(batch, Mapping):
        return False
    body = {k: v for k, v in batch.items() if k != "seal"}
    return key.check(batch.get("seal"), "batch", thread_id, step, body)


def _kept(job: Job) -> dict[str, Any]:
    return {"call": job.call, **({"unconfined": True} if job.unconfined else {})}


def _job(kept: Mapping[str, Any]) -> Job:
    return Job(dict(kept["call"]), bool(kept.get("unconfined")))


def _not_run(call: Mapping[str, Any], why: str) -> ToolMessage:
    return ToolMessage(why, tool_call_id=call["id"], name=call["name"], status="error")


def _noted(
    messages: Sequence[Any], running: Sequence[tuple[str, str]], problem: str
) -> list[ToolMessage]:
    """The group's tool messages again (same ids: they replace them), saying that the
    group's changes could not be recorded for undo."""
    ids = {call_id for call_id, _ in running}
    out = []
    for message in reversed(messages):  # the results of the last model turn
        if isinstance(message, AIMessage):
            break
        if isinstance(message, ToolMessage) and message.tool_call_id in ids and message.id:
            text = f"{message.text}\n[agentcli: not undoable: {problem}]"
            out.append(message.model_copy(update={"content": text}))
    return out[::-1]
