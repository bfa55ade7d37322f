"""What a local Session and a RemoteSession share: a LangGraph run seen as agentcli events.

Both feed `Translator` the (mode, chunk) pairs that `graph.stream(stream_mode=["updates",
"custom"])` yields (remote.py first turns a server's stream into that shape), and
read reviews, policy answers and stop reasons from a thread's state the same way. A local
Session also streams "values", so that `Translator.end` can tell how the run left the
thread without reloading it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

from langchain_core.messages import AIMessage, ToolMessage

from agentcli.agent.agent_graph import steps_since_user
from agentcli.agent.model.chat_model import cost_usd
from agentcli.agent.repeated_calls import repeats, stopped_by
from agentcli.config import Settings
from agentcli.decisions import Decide, Decision
from agentcli.events import (
    AnswerCutOff,
    AssistantMessage,
    CallProgress,
    Compacted,
    EgressQuestion,
    Event,
    HookDecision,
    HookNote,
    Retry,
    ReviewRequest,
    TextDelta,
    ToolOutput,
    ToolResult,
    add_usage_value,
)
from agentcli.hooks.decision_notes import STREAM_KEY
from agentcli.policy.approval_modes import LABEL
from agentcli.policy.approval_policy import Policy
from agentcli.threads.cut_off_answer import marked_cut_off
from agentcli.threads.langgraph_internals import INTERRUPT
from agentcli.threads.stopped_answer import was_stopped

TITLE_CHARS = 60


class RunEnd(NamedTuple):
    """How a run left its thread, read from its stream: the `values` and `interrupts` of
    the StateSnapshot that `graph.get_state()` would give, without deserialising it."""

    values: dict[str, Any]
    interrupts: tuple[Any, ...]


class Translator:
    """Turns stream parts into events; keeps the run's last answer and its token usage,
    and (with the "values" mode) how the run left the thread."""

    def __init__(self, on_answer: Callable[[str], None] | None = None) -> None:
        self.final = ""
        self.stopped = (
            False  # the last answer was stopped by the person (threads/stopped_answer.py)
        )
        self.usage: dict[str, int] = {}
        self.cut_off: str | None = None  # why the last answer was cut off, if it was
        self._on_answer = on_answer
        self._values: dict[str, Any] | None = None  # the state after the last step
        self._interrupts: list[Any] = []  # what the run stopped at, in the order asked

    def end(self) -> RunEnd | None:
        """The state the run ended in; None when its stream does not show it all.

        LangGraph streams the state after each step and once more when a run stops at an
        interrupt, with the writes of the step's finished tasks applied: as get_state()
        reads it. Several interrupts (parallel tool tasks asking again after a crash) come
        in the order their tasks finished, not get_state()'s, which decides which one is
        shown first: None then, to read them in that order.
        """
        if self._values is None or len(self._interrupts) > 1:
            return None
        return RunEnd(self._values, tuple(self._interrupts))

    def events(self, mode: str, chunk: Any) -> Iterator[Event]:
        if mode == "values":
            self._values = chunk
            return
        if mode == "custom":
            if isinstance(chunk, dict) and "token" in chunk:  # the agent node's (graph.ask)
                yield TextDelta(str(chunk["token"]))
            elif isinstance(chunk, dict) and isinstance(chunk.get("call_progress"), dict):
                yield call_progress(chunk["call_progress"])
            elif isinstance(chunk, dict) and "tool_output" in chunk:
                yield ToolOutput(str(chunk.get("tool_call_id")), chunk["tool_output"])
            elif isinstance(chunk, dict) and isinstance(retry := chunk.get("retry"), dict):
                yield Retry(
                    str(retry.get("error", "")),
                    int(retry.get("attempt", 0)),
                    int(retry.get("attempts", 0)),
                    str(retry.get("change", "")),
                    str(retry.get("detail", "")),
                )
            elif isinstance(chunk, dict) and isinstance(chunk.get("compacted"), dict):
                yield compacted(chunk["compacted"])
            elif isinstance(chunk, dict) and isinstance(chunk.get("hook_note"), str):
                yield HookNote(chunk["hook_note"])
            elif isinstance(chunk, dict) and isinstance(chunk.get("egress_question"), dict):
                if (asked := egress_question(chunk["egress_question"])) is not None:
                    yield asked
            elif isinstance(chunk, dict) and isinstance(chunk.get(STREAM_KEY), dict):
                yield hook_decision(chunk[STREAM_KEY])
            return
        for node, update in chunk.items():
            if node == INTERRUPT:
                self._interrupts.extend(update)
                continue
            yield from _plan_results(update)
            for message in (update or {}).get("messages", []):
                if isinstance(message, ToolMessage):
                    yield ToolResult(
                        message.tool_call_id, message.name or "", message.text, message.status
                    )
                elif isinstance(message, AIMessage) and node == "agent":
                    self.final = message.text
                    self.stopped = was_stopped(message)
                    if self.final and self._on_answer:
                        self._on_answer(self.final)
                    turn = usage_of(message)
                    for key, value in (turn or {}).items():
                        self.usage[key] = add_usage_value(key, self.usage.get(key), value)
                    calls = [dict(call) for call in message.tool_calls]
                    yield AssistantMessage(self.final, calls, turn)
                    cut = marked_cut_off(message)
                    self.cut_off = cut[0] if cut else None
                    if cut:
                        yield AnswerCutOff(*cut)

    def summary(self, settings: Settings) -> dict[str, Any]:
        """The run's usage for Done: tokens, and cost_usd if the config prices the model."""
        summary: dict[str, Any] = dict(self.usage)
        cost = cost_usd(settings, settings.model, self.usage) if self.usage else None
        if cost is not None:
            summary["cost_usd"] = cost
        return summary


def _plan_results(update: Any) -> Iterator[ToolResult]:
    """A plan task's result as it comes (the model reads them all at once, later)."""
    results = update.get("plan_results") if isinstance(update, dict) else None
    for call_id, entry in (results or {}).items() if isinstance(results, dict) else ():
        if isinstance(entry, dict) and isinstance(entry.get("content"), str):
            task = str(call_id).rsplit(".", 1)[-1]
            name = f"{entry.get('name') or 'tool'} (plan task {task})"
            status = "error" if entry.get("status") == "error" else "success"
            yield ToolResult(str(call_id), name, entry["content"], status)


def call_progress(info: dict[str, Any]) -> CallProgress:
    """The agent node's progress of a streaming call (agent/model/call_progress.py) as an
    event; from a server, any field of the wrong type reads as empty."""

    def number(key: str) -> int:
        value = info.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    def string(key: str) -> str:
        value = info.get(key)
        return value if isinstance(value, str) else ""

    return CallProgress(number("index"), string("name"), string("target"), number("bytes"))


def egress_question(info: dict[str, Any]) -> EgressQuestion | None:
    """A shell call's egress question (tools/egress_questions.Question) as an event; None
    when a field has the wrong type."""
    call, qid, how, host, port = (info.get(k) for k in ("call_id", "id", "how", "host", "port"))
    if not (isinstance(call, str) and isinstance(qid, str) and isinstance(how, str)):
        return None
    if not isinstance(host, str) or not isinstance(port, int) or isinstance(port, bool):
        return None
    return EgressQuestion(call, qid, how, host, port)


def hook_decision(record: dict[str, Any]) -> HookDecision:
    """A hook's decision from the stream (a server's too: every field read as text)."""

    def text(key: str) -> str:
        value = record.get(key)
        return value if isinstance(value, str) else ""

    call_id, tool = record.get("call_id"), record.get("tool")
    return HookDecision(
        text("hook"),
        text("event"),
        text("decision"),
        text("reason"),
        call_id if isinstance(call_id, str) else None,
        tool if isinstance(tool, str) else None,
    )


def compacted(info: dict[str, Any]) -> Compacted:
    """The agent node's notice of a compaction (agent/context/fit.notice) as an event."""
    numbers = {
        key: value if isinstance(value, int) and not isinstance(value, bool) else None
        for key in ("tokens_before", "tokens_after", "window")
        for value in [info.get(key)]
    }
    upto = info.get("upto")
    return Compacted(upto if isinstance(upto, int) else 0, str(info.get("reason")), **numbers)


def title_of(text: str) -> str:
    """A thread's title: its first message on one line, clipped."""
    return " ".join(text.split())[:TITLE_CHARS] or "(empty)"


def usage_of(message: AIMessage) -> dict[str, int] | None:
    """A turn's tokens; `estimated: True` when the server sent none (token_count.py)."""
    usage = message.usage_metadata
    if not usage:
        return None
    turn = {
        "input_tokens": usage["input_tokens"],
        "output_tokens": usage["output_tokens"],
        "total_tokens": usage["total_tokens"],
    }
    if (message.response_metadata or {}).get("usage_estimated"):
        turn["estimated"] = True
    return turn


def review_in(thread_id: str, interrupts: Iterable[Any]) -> ReviewRequest | None:
    """The review among a thread's pending interrupt values, if there is one."""
    for value in interrupts:
        if isinstance(value, dict) and "action_requests" in value:
            plan = value.get("plan")
            return ReviewRequest(
                thread_id, list(value["action_requests"]), plan if isinstance(plan, list) else None
            )
    return None


def policy_decisions(
    policy: Policy, review: ReviewRequest, allowed: Iterable[str], workspace: Path | None = None
) -> list[Decision] | None:
    """Decide a pending review by a policy, or None if a person must (always for a call
    that may have partly run before, or one a hook asked about or changed: no flag or rule
    answers it). An approval mode
    answers nothing here: it was in force, or not, when the review asked."""
    allowed = list(allowed)
    decisions: list[Decision] = []
    for request in review.action_requests:
        if request.get("rerun") or request.get("hook"):  # a hook asked: a person answers
            return None
        verdict = policy.decide(request["name"], request["args"], allowed, workspace=workspace)
        if verdict.decision == "ask" or verdict.who == LABEL:
            return None  # a mode decides before a call is asked, never answers a question
        if verdict.decision == "allow":
            decisions.append(Decide.approve(who=verdict.who, by=verdict.by))
        else:
            decisions.append(Decide.reject(verdict.refusal, who=verdict.who, by=verdict.by))
    return decisions


def stop_reason(values: dict[str, Any], settings: Settings, thread_id: str) -> str | None:
    """Why a run that ended without an answer stopped (a limit), or None if it answered."""
    messages = values.get("messages", [])
    if values.get("invalid_turns", 0) >= settings.max_invalid_turns:
        return (
            f"the model made invalid tool calls {values['invalid_turns']} turns in a row;"
            f" send a message to continue thread {thread_id}"
        )
    if messages and not isinstance(messages[-1], AIMessage):
        if looped := stopped_by(repeats(messages, settings.max_repeated_calls)):
            return (
                f"stopped: the model made the same call, {looped.said()} with the same"
                f" result, after being told once (agent.max_repeated_calls ="
                f" {settings.max_repeated_calls}); send a message to continue thread {thread_id}"
            )
        return (
            f"stopped after {steps_since_user(messages)} model steps (max_steps);"
            f" send a message to continue thread {thread_id}"
        )
    return None
