"""Tool calls cut off by a crash: how they are asked about again, and how they are found.

A tools task that LangGraph runs again because its result was never saved finds its call
in the journal (threads/call_journal.py) and asks the person before anything runs
(`ask_again`). That question exists only once the task runs again, so a thread left by a
crash would look as if nothing waited. `cut_off` finds the same calls without running
anything: the thread's pending tools tasks whose result is not saved and whose journal key
(call id and task namespace, "tools:<task id>") says they started. It gives each the
question the task will ask, under the interrupt id LangGraph will give it, so an answer can
be addressed to it before it is asked.

A call that may still be running is never offered to run again: `settle` finds the process
that supervised its first run (call_journal.RunProcess) and, on this host, ends it and all it
started; on another host, or if it cannot be ended, the call can only be rejected or marked
done.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, ToolCall, ToolMessage
from langchain_core.tools import BaseTool
from langgraph.types import Interrupt

from agentcli.agent.review.answers import ask, checked
from agentcli.agent.review.interrupt_payload import review_request
from agentcli.agent.state import RunContext
from agentcli.audit.records import audit_record, decider, refusal_kind
from agentcli.decisions import PLAN_RERUN_DECISIONS, RERUN_DECISIONS
from agentcli.threads.call_journal import boot_id

RERUN = {
    "started": "possibly partly run: agentcli stopped while this call ran",
    "finished": "it ran, but agentcli stopped before its result was saved",
    "elsewhere": "possibly still running on another host ({where}), where agentcli stopped"
    " while this call ran: check there, then mark it done or reject it; it cannot run again",
    "alive": "still running ({where}): its first run could not be stopped; stop it, then"
    " mark it done or reject it; it cannot run again",
}
NOT_AGAIN = {"elsewhere": ["reject", "done"], "alive": ["reject", "done"]}
REJECTED_AGAIN = "not run again: rejected by the user"
MARKED_DONE = "not run again: the person marked this call as done; its result is unknown"
NODE = "tools"


def journal_key(call_id: str | None, checkpoint_ns: str) -> str:
    """The journal's name for one call in one task (call ids alone repeat on some servers)."""
    return f"{call_id} {checkpoint_ns}"


def rerun_request(
    call: ToolCall, earlier: str, where: str = "", offered: Sequence[str] = RERUN_DECISIONS
) -> dict[str, Any]:
    """The question for a call cut off by a crash: "done" is a choice only here."""
    allowed = [d for d in NOT_AGAIN.get(earlier, RERUN_DECISIONS) if d in offered]
    request = review_request([(call, RERUN[earlier].format(where=where))], allowed)
    request["action_requests"][0]["rerun"] = earlier
    return request


def settle(journal: Any, thread_id: str, key: str, earlier: str) -> tuple[str, str]:
    """(the state to ask about, where its first run is) for a call the journal says
    `earlier`. A started call whose supervising process is alive on this host is ended
    with all it started (the caller holds the thread: no live run of it is ours to
    spare): "elsewhere" if that process is on another host, "alive" if it cannot be
    ended."""
    process = journal.call_process_of(thread_id, key) if earlier == "started" else None
    if process is None:
        return earlier, ""
    where = f"host {process.host}, process {process.pid}"
    if not process.is_here():
        return "elsewhere", where
    if process.boot and process.boot != boot_id():  # gone with the boot it ran in
        return earlier, where
    from agentcli_tools.process_tree import end_tree

    if not end_tree(process.pid, process.started):
        return "alive", where
    return earlier, where


def ask_again(
    call: ToolCall,
    earlier: str,
    by_name: Mapping[str, BaseTool],
    ctx: RunContext | None = None,
    where: str = "",
    offered: Sequence[str] = RERUN_DECISIONS,
) -> tuple[ToolCall | None, dict[str, Any]]:
    """Ask about a cut-off call: (the call to run, possibly edited, or None) and the state
    update to return instead of running it (its tool message and audit record). A call
    the run's policy denies (an edit into a denied call, or a resume with --deny) does not
    run; on a server, an answer's say that a rule or flag decided is not believed."""
    request = rerun_request(call, earlier, where, offered)
    allowed = request["review_configs"][0]["allowed_decisions"]
    checker: Callable[[Any], Any] = lambda answer: checked(  # noqa: E731
        answer, [call], by_name, allowed
    )
    decision = ask(request, checker)[0]
    who, by = decider(decision, ctx is not None and ctx.from_clients)
    kind = decision["type"]
    if kind in ("approve", "edit"):
        args = decision["edited_action"]["args"] if kind == "edit" else call["args"]
        verdict = ctx.policy.denial(call["name"], args, workspace=ctx.workspace) if ctx else None
        if verdict is None:
            outcome = "approved again" if kind == "approve" else "edited"
            record = audit_record(call, outcome, who, by, ran_args=args, rerun=earlier)
            return {**call, "args": args}, {"audit": [record]}
        who, by, text, outcome = verdict.who, verdict.by, verdict.refusal, "denied"
    else:
        text = MARKED_DONE if kind == "done" else decision.get("message") or REJECTED_AGAIN
        expired = refusal_kind(who, by, True) == "expired"
        outcome = "marked done" if kind == "done" else "expired" if expired else "rejected"
    message = ToolMessage(text, tool_call_id=call["id"] or "", name=call["name"], status="error")
    feedback = decision.get("message") if kind == "reject" else None
    record = audit_record(call, outcome, who, by, feedback=feedback, rerun=earlier)
    return None, {"messages": [message], "audit": [record]}


def cut_off(
    snapshot: Any, journal: Any, thread_id: str, also: Sequence[ToolCall] = ()
) -> list[Interrupt]:
    """The questions a thread's cut-off calls will ask, found without running anything.

    `snapshot` is a StateSnapshot (its `tasks` are the steps LangGraph would run next);
    a call counts when its task has no saved result and the journal says it started. A
    first run still alive on this host is ended before the question is given (`settle`).
    `also`: calls the tools tasks may run that are not the model's own (a plan's tasks,
    asked about without an edit: plan/plan_task.py).
    """
    tasks: Sequence[Any] = getattr(snapshot, "tasks", ())
    pending = [t for t in tasks if t.name == NODE and t.result is None and not t.interrupts]
    if journal is None or not pending:
        return []
    messages = snapshot.values.get("messages", [])
    turn = next((m for m in reversed(messages) if isinstance(m, AIMessage)), None)
    if turn is None:
        return []
    found = []
    for task in pending:
        namespace = f"{NODE}:{task.id}"
        asked = [(c, RERUN_DECISIONS) for c in turn.tool_calls]
        for call, offered in [*asked, *((c, PLAN_RERUN_DECISIONS) for c in also)]:
            key = journal_key(call["id"], namespace)
            earlier = journal.call_state(thread_id, key)
            if earlier in RERUN:
                earlier, where = settle(journal, thread_id, key, earlier)
                question = rerun_request(call, earlier, where, offered)
                found.append(Interrupt.from_ns(question, namespace))
                break
    return found
