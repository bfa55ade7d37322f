"""The tools node: LangGraph's ToolNode, one approved call per task, guarded by the journal.

The executor (executor.py) sends the calls of a group, each as its own task, and LangGraph
runs them side by side. A task runs only with the seal the executor gave it for this step
(review/approval_seals.py). A task LangGraph runs again because its result was never saved
(the process died while the tool ran, or just after) finds its call in the journal, and the
person is asked again (review/cut_off_calls.py), the call marked as possibly partly run,
instead of it running twice in silence; a command's first run that may still be alive is
ended first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from agentcli_tools.egress_questions import SAID, THREAD
from langchain_core.messages import ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.prebuilt import ToolNode
from langgraph.runtime import Runtime

from agentcli.agent.plan.plan_task import run_task
from agentcli.agent.review.approval_seals import (
    call_sealed,
    host_entry,
    seal_host,
    step_of,
    thread_of,
)
from agentcli.agent.review.cut_off_calls import ask_again, journal_key, settle
from agentcli.agent.state import RunContext
from agentcli.agent.toolset.sandboxing import OFF, UNCONFINED, ran_under, would_confine
from agentcli.agent.untrusted_text_fence import fence
from agentcli.audit.records import NOT_APPROVED, audit_record, egress_record
from agentcli.decisions import PLAN_RERUN_DECISIONS, RERUN_DECISIONS
from agentcli.hooks.decision_notes import STREAM_KEY
from agentcli.hooks.turn_events import tool_used
from agentcli.threads.call_journal import RunProcess
from agentcli.threads.langgraph_internals import with_runtime
from agentcli.threads.store_key import key_of

CHOSEN = SAID[THREAD]  # the egress proxy's why for a connection the person allowed so


def unexpected_error(error: Exception) -> str:
    """A tool's failure that is not one of its reported errors (a bug, or the machine's):
    its kind and its message, which for an OSError names the path (its repr does not)."""
    return f"Error: {type(error).__name__}: {error}"


def make_tools_node(tools: Sequence[BaseTool]):  # noqa: ANN201 - a LangGraph node
    tool_node = ToolNode(list(tools), handle_tool_errors=unexpected_error)
    by_name = {tool.name: tool for tool in tools}

    def tools_node(
        task: dict[str, Any], runtime: Runtime[RunContext], config: RunnableConfig
    ) -> Any:
        key, thread_id = key_of(runtime.context), thread_of(config)
        # only a call the review or approve node sealed for this thread and step runs, and
        # it is checked before the journal: a task LangGraph runs again still carries it
        if not isinstance(task, dict) or not call_sealed(key, thread_id, step_of(config), task):
            return {"audit_pending": [_not_approved(task)]}  # chained by the next node
        call = task["tool_call"]
        unconfined = task.get("sandbox") == UNCONFINED  # sealed with the call: checked above
        plan = task.get("plan")  # a plan's task (sealed too): plan/plan_task.py runs it
        undo = task.get("undo") or ""  # why its group cannot be undone (sealed too)
        task = {k: v for k, v in task.items() if k not in ("approval", "sandbox", "plan", "undo")}
        if plan is None:
            return _run(task, call, unconfined, undo, runtime, config)

        def run(ready: dict[str, Any]) -> Any:  # the call with its deps' results put in
            ready_task = {**task, "tool_call": ready}
            return _run(ready_task, ready, unconfined, undo, runtime, config, PLAN_RERUN_DECISIONS)

        journal = runtime.context.journal
        at = journal_key(call["id"], config["configurable"].get("checkpoint_ns", ""))
        cut = journal is not None and bool(journal.call_state(thread_id, at))
        return run_task(
            call, plan, runtime.context, key, thread_id, run, cut, runtime.stream_writer
        )

    def _asked_again(
        call: Any, ctx: RunContext, config: RunnableConfig, offered: Sequence[str]
    ) -> tuple[Any, dict[str, Any]] | None:
        """For a call the journal saw start in this task (a crash cut it off): the person's
        answer, (the call to run, or None, and the update that says so); else None."""
        journal, thread_id = ctx.journal, thread_of(config)
        key = journal_key(call["id"], config["configurable"].get("checkpoint_ns", ""))
        earlier = journal.call_state(thread_id, key) if journal is not None else None
        if not earlier:
            return None
        # never offered again while its first run may still be alive
        earlier, where = settle(journal, thread_id, key, earlier)
        again, decided = ask_again(call, earlier, by_name, ctx, where, offered)
        return again, _pending(decided)

    def _run(
        task: dict[str, Any],
        call: Any,
        unconfined: bool,
        undo: str,
        runtime: Runtime[RunContext],
        config: RunnableConfig,
        offered: Sequence[str] = RERUN_DECISIONS,
    ) -> Any:
        ctx = runtime.context
        journal = ctx.journal
        thread_id = thread_of(config)
        # journal key: the call in this task. LangGraph gives a task run again the same id
        # (its namespace); some servers give every turn's first call the same call id.
        key = journal_key(call["id"], config["configurable"].get("checkpoint_ns", ""))
        decided: dict[str, Any] = {}
        if asked := _asked_again(call, ctx, config, offered):
            again, decided = asked
            if again is None:
                return decided
            task = {**task, "tool_call": again}
        egress: list[Any] = []  # the egress proxy's decisions for this call's command
        config = _with_context(config, runtime, journal, thread_id, key, unconfined, egress)
        if journal is not None:
            journal.call_started(thread_id, key)
        result = _redacted(tool_node.invoke(task, config), ctx.redactor)
        if egress and isinstance(result, dict):
            records = [egress_record(call, decision) for decision in egress]
            result = {**result, "audit_pending": [*result.get("audit_pending", []), *records]}
            result = {**result, **_thread_hosts(key_of(ctx), thread_id, egress)}
        _after(result, call, ctx, thread_id, runtime.stream_writer)  # PostToolUse hooks
        if undo:
            _note(result, undo)
        if would_confine(ctx, call["name"]) or unconfined:
            _label(result, ran_under(ctx, unconfined))
        if journal is not None:
            journal.call_finished(thread_id, key)
        return {**result, **decided} if decided and isinstance(result, dict) else result

    return tools_node


def _thread_hosts(key: Any, thread_id: str, egress: list[Any]) -> dict[str, Any]:
    """The hosts the person allowed for this thread in this command (their answer THREAD
    to the egress proxy's question, told in-process: no tool output or model text makes
    one), sealed for the thread's state, so later runs of the thread let them through."""
    chosen = {
        (d.host, d.port) for d in egress if d.allowed and d.who == "person" and d.why == CHOSEN
    }
    if not chosen:
        return {}
    return {
        "allowed_hosts": [host_entry(host, port) for host, port in sorted(chosen)],
        "allowed_seals": [seal_host(key, thread_id, host, port) for host, port in sorted(chosen)],
    }


def _pending(update: dict[str, Any]) -> dict[str, Any]:
    """A tools task's update, its audit records left for the next node to chain (it cannot
    see the thread's audit: audit/chain.py)."""
    records = update.get("audit")
    rest = {k: v for k, v in update.items() if k != "audit"}
    return {**rest, "audit_pending": records} if records else rest


def _with_context(
    config: RunnableConfig,
    runtime: Runtime[RunContext],
    journal: Any,
    thread_id: str,
    key: str,
    unconfined: bool,
    egress: list[Any],
) -> RunnableConfig:
    """The config with a runtime whose context records, for this call, the process that
    supervises a command it runs (ToolContext.on_process), before the command starts, and
    the decisions of its egress proxy (into ``egress``); and no sandbox for a call sealed
    to run unconfined."""
    changes: dict[str, Any] = {"sandbox": OFF} if unconfined else {"on_egress": egress.append}
    if journal is not None:

        def on_process(pid: int, started: str) -> None:
            journal.call_process(thread_id, key, RunProcess.here(pid, started))

        changes["on_process"] = on_process
    if not changes:
        return config
    context = replace(runtime.context, **changes)
    return with_runtime(config, runtime.override(context=context))


def _after(result: Any, call: Any, ctx: RunContext, thread: str, write: Any) -> None:
    """The person's PostToolUse hooks on the call's result: what they say for the model is
    added to it (fenced), what they say for the person is a note."""
    if ctx.hooks is None or not ctx.hooks.has("PostToolUse"):
        return
    for message in result.get("messages", []) if isinstance(result, dict) else []:
        if not isinstance(message, ToolMessage):
            continue
        ok = message.status != "error"
        heard = tool_used(ctx.hooks, call, message.text, ok, thread, ctx.workspace, ctx.policy.mode)
        for said in heard.notes:
            write({"hook_note": said})
        for record in heard.decided:
            write({STREAM_KEY: record})
        told = [f"blocked by {heard.blocked}"] if heard.blocked else []
        redact = getattr(ctx.redactor, "value", None) or (lambda text: text)
        for said in [*told, *heard.context]:
            if isinstance(message.content, str):
                message.content += "\n" + fence("hook_feedback", redact(said))


def _note(result: Any, problem: str) -> None:
    """Say on the call's tool message that its group's changes were not snapshotted."""
    for message in result.get("messages", []) if isinstance(result, dict) else []:
        if isinstance(message, ToolMessage) and isinstance(message.content, str):
            message.content += f"\n[agentcli: not undoable: {problem}]"


def _label(result: Any, sandbox: str) -> None:
    """Record on the call's tool message the sandbox it ran under (the transcript shows it)."""
    for message in result.get("messages", []) if isinstance(result, dict) else []:
        if isinstance(message, ToolMessage):
            message.additional_kwargs["sandbox"] = sandbox


def _redacted(result: Any, redactor: Any) -> Any:
    """The tool messages with the session's secrets replaced (tools.redaction), before
    they reach the checkpoint and the model."""
    if not redactor or not isinstance(result, dict):
        return result
    for message in result.get("messages", []):
        if isinstance(message, ToolMessage):
            message.content = redactor.value(message.content)
            message.artifact = redactor.value(message.artifact)
    return result


def _not_approved(task: Any) -> dict[str, Any]:
    """The audit record of a tools task that carries no valid seal: it did not run.

    No tool message: its call id may be no call of the model's (a forged Send), and a tool
    message answering no call makes the model's API refuse the whole history."""
    call = task.get("tool_call") if isinstance(task, dict) else None
    call = call if isinstance(call, dict) else {}
    shown = {
        "id": str(call.get("id"))[:200],
        "name": str(call.get("name"))[:200],
        "args": call.get("args") if isinstance(call.get("args"), dict) else None,
    }
    return audit_record(shown, "refused", "agentcli", NOT_APPROVED)
