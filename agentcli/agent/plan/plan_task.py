"""One task of a plan in the tools node: put its deps' results in, run.

The agent node sends a wave's tasks together, as one group of the executor (plan_run.py,
agent/executor.py): every task whose deps are all done, so a task never waits for another.
Its sealed `plan` part holds its deps' results (`given`).

Its arguments get those results (substitution.py). When that changes them the policy
looks again: a deny rule refuses the task, and a task a rule allowed (not a person) runs
only if a rule still allows it; then the person's PreToolUse hooks are shown what it will
run, and their deny or ask refuses it (hook_checks.py). The call then runs as any call
does (the journal, undo's snapshots, the sandbox) and its tool message becomes its sealed
entry in `plan_results`: it answers no call of the model's; the agent node joins them
(plan_run.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from langchain_core.messages import ToolMessage

from agentcli.agent.plan.result_targets import moved
from agentcli.agent.plan.substitution import substitute
from agentcli.agent.review.hook_checks import HOOK, hooks_said
from agentcli.agent.review.mode_checks import held
from agentcli.audit.records import PEOPLE, audit_record
from agentcli.hooks.decision_notes import STREAM_KEY
from agentcli.hooks.tool_names import agentcli_input
from agentcli.threads.store_key import ApprovalKey

DONE, FAILED, SKIPPED, REFUSED = "done", "failed", "skipped", "refused"
SHELL_OK = "exit code 0"


def result_parts(thread_id: str, run: str, call_id: str, entry: Mapping[str, Any]) -> tuple:
    """What a task's result is sealed over: a client of a server cannot write one."""
    fields = (entry.get("outcome"), entry.get("content"), entry.get("why"), entry.get("ran_args"))
    return ("plan-result", thread_id, run, call_id, *fields)


def run_task(
    call: dict[str, Any],
    plan: Mapping[str, Any],
    ctx: Any,
    key: ApprovalKey,
    thread_id: str,
    run: Callable[[dict[str, Any]], Any],
    cut_off: bool = False,
    write: Callable[[dict[str, Any]], None] = lambda part: None,
) -> dict[str, Any]:
    """The update of one plan task: its entry in `plan_results`, and audit records.
    `run` runs the call (the journal asks about it if a crash cut it off); `cut_off`: the
    journal saw it start before a crash (the person decides what becomes of it); `write`:
    the run's stream, where each hook's decision on the filled-in arguments goes."""
    audit: list[dict[str, Any]] = []
    entry, update = _task(call, plan, ctx, run, audit, cut_off, (thread_id, write))
    entry["seal"] = key.seal(*result_parts(thread_id, plan["run"], call["id"], entry))
    pending = [*audit, *(update.get("audit_pending") or [])]
    return {**update, "plan_results": {call["id"]: entry}, "audit_pending": pending}


def _task(
    call: dict[str, Any],
    plan: Mapping[str, Any],
    ctx: Any,
    run: Callable[[dict[str, Any]], Any],
    audit: list[dict[str, Any]],
    cut_off: bool,
    hooked: tuple[str, Callable[[dict[str, Any]], None]],
) -> tuple[dict[str, Any], dict[str, Any]]:
    values = {int(n): str(v) for n, v in (plan.get("given") or {}).items()}
    args = substitute(call["name"], call["args"], values)
    if args != call["args"]:
        # a task a crash cut off passed these checks before it started, in the process that
        # died: now the person is asked about it (run() asks), whatever this one's policy
        refusal = None if cut_off else moved(call["name"], call["args"], args, set(values), values)
        if refusal is None and not cut_off:
            refusal = _refused(call, args, plan, ctx, audit) or _hooks_refuse(
                call, args, ctx, audit, hooked
            )
        elif refusal is not None:
            audit.append(audit_record(call, "refused", "agentcli", refusal, ran_args=args))
        if refusal:
            return {"outcome": REFUSED, "why": refusal, "ran_args": args}, {}
        audit.append(
            audit_record(call, "substituted", "agentcli", "plan: deps' results", ran_args=args)
        )
    update = run({**call, "args": args})
    if not isinstance(update, dict):
        return {"outcome": FAILED, "why": "the task gave no result"}, {}
    messages = [m for m in update.get("messages", []) if isinstance(m, ToolMessage)]
    rest = {k: v for k, v in update.items() if k != "messages"}
    if not messages:
        return {"outcome": FAILED, "why": "the task gave no result"}, rest
    message = messages[-1]
    ok = message.status != "error" and _shell_ok(call["name"], message.text)
    outcome = DONE if ok else FAILED
    entry = {"outcome": outcome, "content": message.text, "name": message.name, "ran_args": args}
    return entry, rest


def _refused(
    call: Mapping[str, Any], args: dict[str, Any], plan: Mapping[str, Any], ctx: Any, audit: list
) -> str | None:
    """Why a task whose arguments now hold results may not run, or None: a deny rule on
    what it would run wins, and what a rule allowed must still be allowed by one."""
    policy = getattr(ctx, "policy", None)
    if policy is None:
        return None
    allowed = list(plan.get("allowed") or [])
    workspace = getattr(ctx, "workspace", None)

    def ask(with_args: Any) -> Any:
        verdict = policy.decide(call["name"], with_args, allowed, workspace=workspace)
        return held(ctx, call["name"], with_args, verdict)  # a mode's grant, in this run

    verdict = ask(args)
    if verdict.decision == "deny":
        audit.append(audit_record(call, "denied", verdict.who, verdict.by, ran_args=args))
        return f"denied once its deps' results were put in: {verdict.refusal}"
    if plan.get("who") not in PEOPLE and verdict.decision != "allow":
        why = "the rule that allowed it does not allow it with its deps' results put in"
    elif verdict.decision == "ask" and verdict.by != "default" and _newly(call, verdict, ask):
        why = f"with its deps' results put in it meets {verdict.by}, which asks a person"
    else:
        return None
    audit.append(audit_record(call, "refused", "agentcli", why, ran_args=args))
    return f"{why}; a person must review it (call plan again)"


def _hooks_refuse(
    call: Mapping[str, Any],
    args: dict[str, Any],
    ctx: Any,
    audit: list,
    hooked: tuple[str, Callable[[dict[str, Any]], None]],
) -> str | None:
    """Why the person's PreToolUse hooks keep the task, shown what it will run now that its
    deps' results are in (at the plan's review they saw `$N`), or None. Nobody is there to
    ask mid-plan: a hook's ask, a failed hook, or arguments a hook would change refuse it."""
    thread_id, write = hooked  # `write`: the stream, for each hook's decision
    said, decided = hooks_said(ctx, {**call, "args": args}, thread_id)
    for record in decided:
        write({STREAM_KEY: record})
    if said.decision == "deny":
        audit.append(audit_record(call, "denied", HOOK, said.by, ran_args=args))
        why = f": {said.reason}" if said.reason else ""
        return f"denied by {said.by} once its deps' results were put in{why}"
    if said.decision == "ask":
        why = f"with its deps' results put in, {said.by} asks a person"
    elif (
        said.updated is not None
        and agentcli_input(call["name"], said.updated, args, ctx.workspace) != args
    ):
        why = f"with its deps' results put in, {said.by} changes its arguments"
    else:
        return None
    audit.append(audit_record(call, "refused", HOOK, said.by, ran_args=args))
    return f"{why}; a person must review it (call plan again)"


def _newly(call: Mapping[str, Any], verdict: Any, ask: Callable[[Any], Any]) -> bool:
    """Whether the rule that asks about the task with its results in did not already ask
    about it as the person saw it (they approved it knowing that rule)."""
    before = ask(call["args"])
    return (before.decision, before.by) != (verdict.decision, verdict.by)


def _shell_ok(tool: str, content: str) -> bool:
    """A shell task failed when its command did (a non-zero exit, a timeout)."""
    return tool != "shell" or content.split("\n", 1)[0] == SHELL_OK


def value(tool: str, content: str) -> str:
    """What `$N` stands for: the task's result; a shell command's output without its status."""
    if tool != "shell":
        return content
    output = content.split("\n", 1)[1] if "\n" in content else ""
    return "" if output == "(no output)" else output
