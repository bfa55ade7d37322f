"""Answering a local session's review: the decisions checked as the graph would check them
before anything is sent, then sent to the interrupt that asked (or to the one a cut-off
call will raise); edited arguments checked; a review decided by the session's policy.
One part of local.Session: it answers the open thread's review, and the session's run loop
carries the answer out.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from agentcli_tools.context import ToolContext
from langgraph.types import Command

from agentcli.agent.review.answers import checked, unchanged
from agentcli.agent.review.approval_seals import allowed_tools
from agentcli.agent.review.argument_check import validate_args
from agentcli.agent.review.precheck import precondition
from agentcli.audit.records import UNSEALED
from agentcli.decisions import UNCHANGED, Decision
from agentcli.errors import AgentcliError, UsageError
from agentcli.events import Done, Event, ReviewRequest
from agentcli.session.local_graph import LocalGraph
from agentcli.session.open_thread import OpenThread
from agentcli.session.review_expiry import STOP_BEFORE, expiry_decisions, parked_since, waited
from agentcli.session.run_loop import RunLoop
from agentcli.session.stream_events import policy_decisions, review_in
from agentcli.thread_rows import ThreadStatus


class ReviewAnswers:
    """The answers to a pending review: checked here, then run by the run loop."""

    def __init__(self, engine: LocalGraph, thread: OpenThread, runs: RunLoop) -> None:
        self.engine = engine
        self.thread = thread
        self.runs = runs

    def _known(self) -> Any:
        self.runs.wait_stopped()  # a run stopped by Ctrl-C may still be ending its step
        return self.engine.known(self.thread.thread_id)

    def decide(self, decisions: list[Decision]) -> Iterator[Event]:
        """Answer the pending review (v1 HITL decisions, in the order of its calls)."""
        engine, thread_id = self.engine, self.thread.thread_id
        answer: Any = {"decisions": decisions}
        waiting = engine.waiting(thread_id, self._known())
        shown = next(i for i in waiting if review_in(thread_id, [i.value]))
        if problem := self._refusal(answer, shown.value):  # as the graph would refuse it
            raise UsageError(problem)
        command: Command[Any] = Command(resume=answer)
        if shown not in self._known().interrupts:
            # a cut-off call, not asked yet: the answer goes to the interrupt its task will
            # raise. LangGraph reads a resume map only for a checkpoint with pending writes
            # (a kill -9 leaves none), so an empty audit write comes with it.
            command = Command(resume={shown.id: answer}, update={"audit": []})
        elif len(waiting) > 1:  # several tool tasks asking again: answer the one shown
            command = Command(resume={shown.id: answer})
        requests = shown.value["action_requests"]
        pairs = zip(requests, decisions, strict=False)
        to_run = {r["id"] for r, d in pairs if d["type"] != "reject"}
        known = self._known()
        before = len(known.values.get("audit") or [])
        asked = parked_since(known)  # when the review was asked (a watcher times the wait)
        engine.store.update(thread_id, status=ThreadStatus.RUNNING)
        run = self.runs.drive(command, asked.timestamp() if asked else None)
        return self._unless_refused(run, to_run, before)

    def _unless_refused(
        self, events: Iterator[Event], to_run: set[str], before: int
    ) -> Iterator[Event]:
        """The run's events, but where a call these decisions let run was refused by
        agentcli for its seals (its review changed outside agentcli's review, or sealed
        under a key this store does not hold), an error in place of `done`: a decision
        that was refused never ends as if it had been carried out."""
        for event in events:
            if isinstance(event, Done):
                audit = self._known().values.get("audit") or []
                for record in audit[before:]:
                    if (
                        isinstance(record, Mapping)
                        and record.get("call_id") in to_run
                        and record.get("who") == "agentcli"
                        and record.get("by") in UNSEALED
                    ):
                        raise AgentcliError(
                            f"the decision for call {record['call_id']} ({record.get('tool')})"
                            f" was refused and the call did not run: its review in thread"
                            f" {self.thread.thread_id} does not carry this store's seal (changed"
                            " outside agentcli's review); the model was told"
                        )
            yield event

    def deny_expired(self) -> ReviewRequest | None:
        """Deny the open thread's review if it waited past `[approval] expire_after`
        (review_expiry.py): the calls denied, or None. Runs the approve node only: the
        tools and the model wait for the thread's next run."""
        engine, thread_id = self.engine, self.thread.thread_id
        if self.thread.row is None or not engine.settings.expire_after:
            return None
        engine.forget(thread_id)
        snapshot = engine.known(thread_id)
        if len(snapshot.interrupts) != 1:  # none, or tool tasks asking again after a crash
            return None
        review = review_in(thread_id, [snapshot.interrupts[0].value])
        seconds = waited(parked_since(snapshot))
        decisions = expiry_decisions(engine.settings, review, seconds) if review else None
        if review is None or decisions is None:
            return None
        answer: Any = {"decisions": decisions}
        if problem := self._refusal(answer, snapshot.interrupts[0].value):
            raise UsageError(problem)  # a bug: a rejection is always a valid answer
        context = engine.context(self.thread.workspace, ask_window=False)
        engine.store.update(thread_id, status=ThreadStatus.RUNNING)
        engine.forget(thread_id)
        try:
            for _ in engine.graph.stream(
                Command(resume=answer),
                engine.config(thread_id),
                context=context,
                interrupt_before=STOP_BEFORE,
                durability="sync",
            ):
                pass
        finally:  # the index true to the saved state, however it ended
            self.runs.record(engine.state(thread_id), [])
        return review

    def _refusal(self, answer: Any, request: dict[str, Any]) -> str | None:
        """Why the graph would refuse this answer to `request`, checked before sending."""
        calls = [
            {"id": r["id"], "name": r["name"], "args": r["args"]}
            for r in request["action_requests"]
        ]
        allowed = request["review_configs"][0]["allowed_decisions"]
        confined = {r["id"] for r in request["action_requests"] if r.get("sandbox")}
        try:
            context = self._precheck_context()
            checked(
                answer,
                calls,  # type: ignore[arg-type]
                self.engine.tools,
                allowed,
                context=context,
                confined=confined,
            )
        except ValueError as exc:
            return f"answer refused: {exc}"
        return None

    def policy_decisions(self, review: ReviewRequest) -> list[Decision] | None:
        """Decide a pending review by this session's policy, or None if a person must."""
        engine, thread = self.engine, self.thread
        allowed = allowed_tools(engine.approval_key, thread.thread_id, self._known().values)
        return policy_decisions(engine.policy, review, allowed, thread.workspace)

    def check_edit(self, name: str, args: Any, original: Any = None) -> str | None:
        """Why the edited `args` cannot run, or review.UNCHANGED if they are `original`'s."""
        tools = self.engine.tools
        tool = tools.get(name)
        problem = validate_args(tool, args, list(tools), edited=True)
        if problem is None and original is not None and unchanged(tool, original, args):
            return UNCHANGED
        return problem or precondition(tool, args, self._precheck_context())

    def _precheck_context(self) -> ToolContext:
        """What the tools' preconditions read (tools/preconditions.py): no run needed."""
        return ToolContext(
            workspace=self.thread.workspace,
            allow_private_urls=self.engine.settings.allow_private_urls,
        )
