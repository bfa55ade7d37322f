"""A session's runs as spans and metric points: a RunWatcher (session/run_watcher.py) that
reads LangGraph's "tasks" stream (each node's start and result) and agentcli's "custom" one
(retries), as they come.

A turn is one trace: its root span starts with the person's message (or with the first run
of this process that continues a thread) and ends when a run ends other than at a review.
Under it: a span per model request (the agent node), per review (from the question to the
answer; a rule's or a flag's answer takes no time), per tool call (a tools task). A review
still open when the process exits (`run` parked the thread) ends then, undecided.

What is recorded here is plain data; the exporter (otlp_export.py) makes the spans, with
their times as recorded, and redacts every value. Nothing here may raise into the run.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from langchain_core.messages import AIMessage, ToolMessage

from agentcli.telemetry.span_facts import (
    call_facts,
    messages_in,
    model_facts,
    records_in,
    result_facts,
    review_facts,
)

log = logging.getLogger(__name__)


@dataclass
class Span:
    """One span as recorded: times in Unix nanoseconds; `error`: the kind of failure."""

    name: str
    start: int
    parent: Span | None = None
    attributes: dict[str, Any] = field(default_factory=dict)
    end: int | None = None
    error: str | None = None
    events: list[tuple[str, int, dict[str, Any]]] = field(default_factory=list)
    handle: Any = None  # the exporter's span, once started (its children name it)


class Sink(Protocol):
    """Where ended spans and metric points go (otlp_export.Exporter)."""

    def span(self, span: Span) -> None: ...

    def add(self, metric: str, value: float, attributes: dict[str, Any]) -> None: ...


class RunTrace:
    """Watches a session's runs; hands each span to the sink as it ends."""

    modes = ("tasks", "custom")

    def __init__(self, sink: Sink, model: str) -> None:
        self.sink = sink
        self.model = model
        self.root: Span | None = None
        self.open: dict[str, Span] = {}  # task id: its model request or tool call
        self.task_start: dict[str, int] = {}  # task id: when a review task started
        self.asked: dict[str, Span] = {}  # call id: a question waiting for its answer
        self.asked_at: int | None = None  # a review asked before this process
        self.tokens = {"input": 0, "output": 0}
        self.broken = False  # a bug here stops the watching, never the run

    # -- RunWatcher ------------------------------------------------------------------

    def started(self, thread_id: str, kind: str, asked_at: float | None) -> None:
        self._safely(self._started, thread_id, kind, asked_at)

    def part(self, mode: str, chunk: Any) -> None:
        self._safely(self._part, mode, chunk)

    def ended(self, status: str) -> None:
        self._safely(self._ended, status)

    def close(self, exit_code: int | None = None) -> None:
        """The process exits: what is still open ends now (a review undecided)."""
        self._safely(self._close, exit_code)

    def _close(self, exit_code: int | None) -> None:
        now = time.time_ns()
        for call_id, span in list(self.asked.items()):
            span.attributes["agentcli.review.decision"] = "none"
            self._finish(span, now)
            del self.asked[call_id]
        for span in list(self.open.values()):
            self._finish(span, now, "interrupted")
        self.open.clear()
        if self.root is not None:
            if exit_code is not None:
                self.root.attributes["agentcli.exit_code"] = exit_code
            self._end_root("exited", now)

    # -- what the stream says ------------------------------------------------------------

    def _safely(self, what: Any, *args: Any) -> None:
        if self.broken:
            return
        try:
            what(*args)
        except Exception:  # a bug in the telemetry: the run goes on, untraced
            self.broken = True
            log.debug("telemetry stopped", exc_info=True)

    def _started(self, thread_id: str, kind: str, asked_at: float | None) -> None:
        now = time.time_ns()
        if kind == "message" and self.root is not None:
            self._end_root("replaced", now)
        if self.root is None:
            self.root = Span(
                "invoke_agent agentcli",
                now,
                attributes={
                    "gen_ai.operation.name": "invoke_agent",
                    "gen_ai.agent.name": "agentcli",
                    **self._requested(),
                    "agentcli.thread.id": thread_id,
                    "agentcli.run.kind": kind,
                },
            )
        self.asked_at = int(asked_at * 1e9) if asked_at and kind == "answer" else None
        if self.asked_at and not self.asked and self.root.start > self.asked_at:
            self.root.start = self.asked_at  # the turn, as seen here, began at the question

    def _ended(self, status: str) -> None:
        if self.root is None:
            return
        self.root.attributes["agentcli.run.status"] = status
        if status == "awaiting_approval":  # at a review, the turn goes on with the answer
            return
        now = time.time_ns()
        for span in self.open.values():  # stopped mid-call, or mid-answer
            self._finish(span, now, "interrupted" if status == "interrupted" else "error")
        self.open.clear()
        self._end_root(status, now)

    def _end_root(self, status: str, now: int) -> None:
        assert self.root is not None
        root, self.root = self.root, None
        root.attributes.setdefault("agentcli.run.status", status)
        root.attributes["gen_ai.usage.input_tokens"] = self.tokens["input"]
        root.attributes["gen_ai.usage.output_tokens"] = self.tokens["output"]
        self.tokens = {"input": 0, "output": 0}
        error = status if status in ("error", "interrupted", "incomplete") else None
        self._finish(root, now, error)

    def _part(self, mode: str, chunk: Any) -> None:
        if mode == "custom":  # mostly the answer's tokens: only a retry is read
            retry = chunk.get("retry") if isinstance(chunk, Mapping) else None
            if isinstance(retry, Mapping):
                self._retried(retry)
            return
        if mode != "tasks" or not isinstance(chunk, Mapping):
            return
        task, name = str(chunk.get("id")), chunk.get("name")
        if "result" not in chunk:  # a task starts
            self._task_started(task, name, chunk.get("input"))
            return
        result, error = chunk.get("result"), chunk.get("error")
        now = time.time_ns()
        if name == "agent":
            self._model_done(task, result, error, now)
        elif name == "tools":
            self._tool_done(task, result, error, now)
        for record in records_in(result):  # whichever node decided (review, approve, tools)
            self._decided(record, task, name == "approve", now)
        for interrupt in chunk.get("interrupts") or []:
            self._questions(interrupt, now)

    def _retried(self, retry: Mapping[str, Any]) -> None:
        """A model request failed and is tried again: an event on its span."""
        model = next((s for s in self.open.values() if s.name.startswith("chat ")), None)
        if model is not None:
            said = {"error.type": str(retry.get("error", ""))[:200]}
            model.events.append(("retry", time.time_ns(), said))

    def _task_started(self, task: str, name: Any, given: Any) -> None:
        now = time.time_ns()
        if name == "agent":
            self.open[task] = Span(
                f"chat {self.model}".rstrip(),
                now,
                self.root,
                {"gen_ai.operation.name": "chat", **self._requested()},
            )
        elif name == "tools" and isinstance(given, Mapping):
            call = given.get("tool_call")
            if isinstance(call, Mapping):
                facts = call_facts(call)
                self.open[task] = Span(f"execute_tool {facts['gen_ai.tool.name']}", now, self.root)
                self.open[task].attributes.update(facts)
        self.task_start[task] = now

    def _requested(self) -> dict[str, str]:
        """The model asked, when known here (a new thread on a server: not until it answers,
        gen_ai.response.model)."""
        return {"gen_ai.request.model": self.model} if self.model else {}

    def _model_done(self, task: str, result: Any, error: Any, now: int) -> None:
        span = self.open.pop(task, None)
        if span is None:
            return
        answers = messages_in(result, AIMessage)
        if answers:
            facts = model_facts(answers[-1])
            span.attributes.update(facts)
            for kind in ("input", "output"):
                tokens = facts.get(f"gen_ai.usage.{kind}_tokens")
                if tokens is not None:
                    self.tokens[kind] += tokens
                    self.sink.add(
                        "gen_ai.client.token.usage",
                        tokens,
                        {"gen_ai.token.type": kind, "gen_ai.operation.name": "chat"}
                        | self._requested(),
                    )
        self._finish(span, now, "model_error" if error else None)

    def _tool_done(self, task: str, result: Any, error: Any, now: int) -> None:
        span = self.open.pop(task, None)
        if span is None:
            return
        kind = "tool_error" if error else None
        for message in messages_in(result, ToolMessage)[:1]:
            facts, kind = result_facts(message)
            span.attributes.update(facts)
        self.sink.add(
            "agentcli.tool.calls",
            1,
            {
                key: span.attributes.get(key, "none")
                for key in ("gen_ai.tool.name", "agentcli.tool.status", "agentcli.tool.sandbox")
            },
        )
        self._finish(span, now, kind)

    def _questions(self, interrupt: Any, now: int) -> None:
        """A review asks a person: a span each call, open until it is answered."""
        value = interrupt.get("value") if isinstance(interrupt, Mapping) else None
        requests = value.get("action_requests") if isinstance(value, Mapping) else None
        for request in requests if isinstance(requests, list) else []:
            if not isinstance(request, Mapping) or str(request.get("id")) in self.asked:
                continue
            name = str(request.get("name"))
            span = Span(f"review {name}", now, self.root, {"gen_ai.tool.name": name})
            span.attributes["gen_ai.tool.call.id"] = str(request.get("id"))
            span.attributes["agentcli.review.asked"] = True
            self.asked[str(request.get("id"))] = span
            self.sink.add("agentcli.review.questions", 1, {"gen_ai.tool.name": name})

    def _decided(self, record: Mapping[str, Any], task: str, answer: bool, now: int) -> None:
        """A decision: the answer to a question asked here, to one asked before this
        process (an answer's run: waited since then), or a rule's, flag's or hook's."""
        facts = review_facts(record)
        span = self.asked.pop(str(record.get("call_id")), None)
        if span is None:
            earlier = answer and self.asked_at is not None
            start = self.asked_at if earlier else self.task_start.get(task, now)
            span = Span(f"review {facts['gen_ai.tool.name']}", start or now, self.root)
            span.attributes["agentcli.review.asked"] = earlier
        span.attributes.update(facts)
        short = {k: facts[k] for k in ("agentcli.review.decision", "agentcli.review.who")}
        self.sink.add("agentcli.review.decisions", 1, short)
        if span.attributes["agentcli.review.asked"]:
            self.sink.add("agentcli.review.wait", (now - span.start) / 1e9, short)
        self._finish(span, now)

    def _finish(self, span: Span, now: int, error: str | None = None) -> None:
        span.end, span.error = now, error
        self.sink.span(span)
