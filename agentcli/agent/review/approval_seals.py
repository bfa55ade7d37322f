"""Proof that the graph's own nodes approved a call: what no client of a server can forge.

Any client of a LangGraph server can write every state channel and send any task
(`Command(update=..., goto=Send(...))`). So the tools node does not run a call because it
was sent one: it runs a call that carries a seal made by the review or approve node, an
HMAC over (thread id, the step the tools task runs at, call id, tool name, arguments as
canonical JSON). The step binds the seal to the one tools task the node sent: a task that
LangGraph runs again after a crash runs at the same step and still verifies; a seal copied
into a later Send does not (steps only grow along a thread).

The review's verdicts (the `review` channel, read by the approve node) are sealed for the
approve task's step as well. The same key seals the tools a person allowed for the rest of
a thread (`A`): the names in `allowed_tools` count only with their seal in `allowed_seals`;
and the hosts a person allowed for the thread when a command's egress proxy asked
(`allowed_hosts`, sealed by the tools node from the person's answer, their seals in
`allowed_seals` as well, under another label, so neither kind of seal stands for the other).

The key belongs to the store the threads live in (Store.secret: 32 random bytes in its
`agentcli_secrets` table, made once by whichever process asks first), so every process that
can write the threads seals and checks with it, on any machine: a call parked from one data
folder is decided from another. It never enters the state or the context a client can read
or write, and a LangGraph server's clients never reach its store. What the seals defend
against is therefore someone who can write a thread's state without reading its store (a
server's client); anyone who can read the store can decide its threads anyway.

An installation's former key file (`approval.key` in the data folder, from before the key
moved into the store) still verifies what it sealed, and never seals anything new. A
RunContext without a key (unit tests, reading a thread) uses a key made for this process.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from agentcli.threads.store_key import ApprovalKey


def thread_of(config: Mapping[str, Any]) -> str:
    return str(config.get("configurable", {}).get("thread_id", ""))


def step_of(config: Mapping[str, Any]) -> int:
    """The step of the task this config is for (LangGraph's task metadata)."""
    step = config.get("metadata", {}).get("langgraph_step")
    if not isinstance(step, int):
        raise RuntimeError("a graph node without its step: cannot seal or check approvals")
    return step


def call_parts(
    thread_id: str,
    step: int,
    call: Mapping[str, Any],
    unconfined: bool = False,
    plan: Mapping[str, Any] | None = None,
    undo: str = "",
) -> tuple[Any, ...]:
    """What the seal of a call the tools node may run at `step` of this thread covers: its
    id, tool and arguments; `unconfined`: a person (or a rule they wrote) chose to run it
    outside the sandbox; `plan`: the call is a task of a plan (its run and the results it
    is given: agent/plan/plan_task.py); `undo`: why its group's changes cannot be undone
    (agent/executor.py), said on its result."""
    parts: tuple[Any, ...] = ("call", thread_id, step, call.get("id"), call.get("name"))
    parts = (*parts, call.get("args"))
    parts = (*parts, "unconfined") if unconfined else parts
    parts = (*parts, "undo", undo) if undo else parts
    return (*parts, "plan", plan) if plan is not None else parts


def seal_call(key: ApprovalKey, *where: Any, **how: Any) -> str:
    """The seal of a call: `key` over call_parts(*where, **how)."""
    return key.seal(*call_parts(*where, **how))


def call_sealed(key: ApprovalKey, thread_id: str, step: int, task: Mapping[str, Any]) -> bool:
    """Whether a tools task carries the seal of its own call, for this thread and step, and
    of its `sandbox` ("off" only if that was sealed too), `plan` and `undo`."""
    call = task.get("tool_call")
    if not isinstance(call, Mapping):
        return False
    unconfined = task.get("sandbox") == "off"
    if task.get("sandbox") not in (None, "off"):
        return False
    plan = task.get("plan")
    if plan is not None and not isinstance(plan, Mapping):
        return False
    undo = task.get("undo") or ""
    if not isinstance(undo, str):
        return False
    parts = call_parts(thread_id, step, call, unconfined, plan, undo)
    return key.check(task.get("approval"), *parts)


def seal_review(
    key: ApprovalKey,
    thread_id: str,
    step: int,
    allowed: list[Any],
    asking: list[Any],
    unconfined: list[Any] | None = None,
    **more: Any,
) -> dict[str, Any]:
    """The review's verdicts for the approve task at `step`, sealed: what the policy allowed
    runs whatever the flags of the process that answers (it was decided and audited), and
    `unconfined` (ids of allowed calls a rule runs outside the sandbox) with it; `more`
    (a plan's denied tasks) is sealed with them."""
    pending: dict[str, Any] = {"allowed": allowed, "asking": asking, **more}
    if unconfined:
        pending["unconfined"] = unconfined
    return {**pending, "seal": key.seal("review", thread_id, step, pending)}


def review_sealed(key: ApprovalKey, thread_id: str, step: int, review: Any) -> bool:
    if not isinstance(review, Mapping):
        return False
    pending = {k: v for k, v in review.items() if k != "seal"}
    return key.check(review.get("seal"), "review", thread_id, step, pending)


def seal_tool(key: ApprovalKey, thread_id: str, name: str) -> str:
    """The seal of a tool allowed for the rest of a thread."""
    return key.seal("always", thread_id, name)


def allowed_tools(key: ApprovalKey, thread_id: str, values: Mapping[str, Any]) -> list[str]:
    """The thread's `allowed_tools` that carry their seal: a name a client wrote is not one."""
    seals: Iterable[Any] = values.get("allowed_seals") or []
    valid = [s for s in seals if isinstance(s, str)]
    names = values.get("allowed_tools") or []
    return [
        n
        for n in names
        if isinstance(n, str) and any(key.check(s, "always", thread_id, n) for s in valid)
    ]


def host_entry(host: str, port: int) -> str:
    """The `allowed_hosts` entry for `host` (as the egress proxy connects to it) and `port`."""
    return json.dumps([host, port], ensure_ascii=False)


def seal_host(key: ApprovalKey, thread_id: str, host: str, port: int) -> str:
    """The seal of a host and port allowed for the rest of a thread (an egress answer)."""
    return key.seal("egress", thread_id, host, port)


def allowed_hosts(
    key: ApprovalKey, thread_id: str, values: Mapping[str, Any]
) -> set[tuple[str, int]]:
    """The (host, port) pairs of the thread's `allowed_hosts` that carry their seal."""
    seals = [s for s in values.get("allowed_seals") or [] if isinstance(s, str)]
    found: set[tuple[str, int]] = set()
    for entry in values.get("allowed_hosts") or []:
        try:
            host, port = json.loads(entry) if isinstance(entry, str) else (None, None)
        except (ValueError, TypeError):
            continue
        if not isinstance(host, str) or type(port) is not int:
            continue
        if any(key.check(s, "egress", thread_id, host, port) for s in seals):
            found.add((host, port))
    return found
