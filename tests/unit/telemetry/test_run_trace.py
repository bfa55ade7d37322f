"""The run watcher (session/run_watcher.py) and the telemetry's spans, through a Session
with the fake chat model, into a sink that records (no OpenTelemetry here: the exporter
is tested against a real OTLP receiver in tests/e2e/test_telemetry.py)."""

from __future__ import annotations

import time
from typing import Any

from agentcli.decisions import Decide
from agentcli.policy.approval_policy import Policy
from agentcli.telemetry.run_trace import RunTrace, Span
from agentcli.telemetry.span_facts import decision_of
from tests.helpers.fakes import call, say


class Recorded:
    def __init__(self) -> None:
        self.spans: list[Span] = []
        self.points: list[tuple[str, float, dict[str, Any]]] = []

    def span(self, span: Span) -> None:
        self.spans.append(span)

    def add(self, metric: str, value: float, attributes: dict[str, Any]) -> None:
        self.points.append((metric, value, attributes))

    def named(self, prefix: str) -> list[Span]:
        return [s for s in self.spans if s.name.startswith(prefix)]


def test_a_turn_with_a_question_is_one_root_and_its_children(make) -> None:
    s = make([call(("note", {"text": "hi"})), say("done")])
    sink = Recorded()
    s.watch(RunTrace(sink, "fake"))
    asked = list(s.send("note hi"))
    assert asked[-1].status == "awaiting_approval"
    assert sink.named("invoke_agent") == []  # the turn goes on at the answer
    list(s.decide([Decide.approve()]))
    (root,) = sink.named("invoke_agent")
    assert root.parent is None and root.attributes["agentcli.run.status"] == "done"
    children = [s for s in sink.spans if s is not root]
    assert sorted(c.name for c in children) == [
        "chat fake",
        "chat fake",
        "execute_tool note",
        "review note",
    ]
    assert all(c.parent is root and c.end is not None for c in children)
    (review,) = sink.named("review")
    assert review.attributes["agentcli.review.who"] == "person"
    assert review.attributes["agentcli.review.decision"] == "approve"
    assert [p[0] for p in sink.points].count("agentcli.review.questions") == 1
    assert [p[0] for p in sink.points].count("agentcli.review.wait") == 1


def test_a_flag_decides_without_a_question(make) -> None:
    s = make([call(("note", {"text": "hi"})), say("done")], policy=Policy(auto_approve=True))
    sink = Recorded()
    s.watch(RunTrace(sink, "fake"))
    list(s.send("note hi"))
    (review,) = sink.named("review")
    assert review.attributes["agentcli.review.who"] == "flag"
    assert review.attributes["agentcli.review.asked"] is False
    assert "agentcli.review.questions" not in [p[0] for p in sink.points]


def test_a_watcher_that_breaks_never_stops_the_run(make) -> None:
    class Broken(Recorded):
        def span(self, span: Span) -> None:
            raise RuntimeError("a bug in the telemetry")

    s = make([say("done")])
    trace = RunTrace(Broken(), "fake")
    s.watch(trace)
    assert list(s.send("hi"))[-1].status == "done"
    assert trace.broken


def test_every_audit_outcome_is_one_of_the_documented_decisions() -> None:
    outcomes = ["allowed", "approved", "approved again", "edited", "rejected", "denied"]
    outcomes += ["feedback", "expired", "invalid", "refused", "marked done", "dismissed"]
    decided = {decision_of(o) for o in outcomes}
    assert decided == {"approve", "edit", "reject", "feedback", "done"}


def test_a_flag_answering_a_question_asked_before_is_timed_from_the_question(make) -> None:
    """`run --thread ID --auto-approve` in another process: the answer's review span
    begins when the thread parked."""
    first = make([call(("note", {"text": "hi"}))])
    assert list(first.send("note hi"))[-1].status == "awaiting_approval"
    thread = first.thread_id
    first.store.release()
    later = make([say("done")], policy=Policy(auto_approve=True))
    later.open(thread)
    sink = Recorded()
    later.watch(RunTrace(sink, "fake"))
    review = later.pending()
    assert review is not None
    decisions = later.policy_decisions(review)
    assert decisions is not None
    opened = time.time_ns()
    list(later.decide(decisions))
    (span,) = sink.named("review")
    assert span.attributes["agentcli.review.who"] == "flag"
    assert span.attributes["agentcli.review.asked"] is True
    assert span.start < opened  # asked when the first session parked
    (root,) = sink.named("invoke_agent")
    assert root.start <= span.start
    waited = [p for p in sink.points if p[0] == "agentcli.review.wait"]
    assert len(waited) == 1 and waited[0][1] >= (span.end - opened) / 1e9
