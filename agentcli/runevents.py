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

from agentcli.config import Settings
from agentcli.events import (
    AssistantMessage,
    Event,
    ReviewRequest,
    TextDelta,
    ToolOutput,
    ToolResult,
)
from agentcli.graph import steps_since_user
from agentcli.model import cost_usd
from agentcli.policy import Policy

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
        self.usage: dict[str, int] = {}
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
            elif isinstance(chunk, dict) and "tool_output" in chunk:
                yield ToolOutput(str(chunk.get("tool_call_id")), chunk["tool_output"])
            return
        for node, update in chunk.items():
            if node == "__interrupt__":
                self._interrupts.extend(update)
                continue
            for message in (update or {}).get("messages", []):
                if isinstance(message, ToolMessage):
                    yield ToolResult(
                        message.tool_call_id, message.name or "", message.text, message.status
                    )
                elif isinstance(message, AIMessage) and node == "agent":
                    self.final = message.text
                    if self.final and self._on_answer:
                        self._on_answer(self.final)
                    turn = usage_of(message)
                    for key, value in (turn or {}).items():
                        self.usage[key] = self.usage.get(key, 0) + value
                    calls = [dict(call) for call in message.tool_calls]
                    yield AssistantMessage(self.final, calls, turn)

    def summary(self, settings: Settings) -> dict[str, Any]:
        """The run's usage for Done: tokens, and cost_usd if the config prices the model."""
        summary: dict[str, Any] = dict(self.usage)
        cost = cost_usd(settings, settings.model, self.usage) if self.usage else None
        if cost is not None:
            summary["cost_usd"] = cost
        return summary


def title_of(text: str) -> str:
    """A thread's title: its first message on one line, clipped."""
    return " ".join(text.split())[:TITLE_CHARS] or "(empty)"


def usage_of(message: AIMessage) -> dict[str, int] | None:
    usage = message.usage_metadata
    if not usage:
        return None
    return {
        "input_tokens": usage["input_tokens"],
        "output_tokens": usage["output_tokens"],
        "total_tokens": usage["total_tokens"],
    }


def review_in(thread_id: str, interrupts: Iterable[Any]) -> ReviewRequest | None:
    """The review among a thread's pending interrupt values, if there is one."""
    for value in interrupts:
        if isinstance(value, dict) and "action_requests" in value:
            return ReviewRequest(thread_id, list(value["action_requests"]))
    return None


def policy_decisions(
    policy: Policy, review: ReviewRequest, allowed: Iterable[str], workspace: Path | None = None
) -> list[dict[str, Any]] | None:
    """Decide a pending review by a policy, or None if a person must (always for a call
    that may have partly run before: no flag or rule runs it again)."""
    allowed = list(allowed)
    decisions: list[dict[str, Any]] = []
    for request in review.action_requests:
        if request.get("rerun"):
            return None
        verdict = policy.decide(request["name"], request["args"], allowed, workspace=workspace)
        if verdict.decision == "ask":
            return None
        who = {"who": verdict.who, "by": verdict.by}
        if verdict.decision == "allow":
            decisions.append({"type": "approve", **who})
        else:
            decisions.append({"type": "reject", "message": verdict.refusal, **who})
    return decisions


def stop_reason(values: dict[str, Any], max_invalid_turns: int, thread_id: str) -> str | None:
    """Why a run that ended without an answer stopped (a limit), or None if it answered."""
    messages = values.get("messages", [])
    if values.get("invalid_turns", 0) >= max_invalid_turns:
        return (
            f"the model made invalid tool calls {values['invalid_turns']} turns in a row;"
            f" send a message to continue thread {thread_id}"
        )
    if messages and not isinstance(messages[-1], AIMessage):
        return (
            f"stopped after {steps_since_user(messages)} model steps (max_steps);"
            f" send a message to continue thread {thread_id}"
        )
    return None
