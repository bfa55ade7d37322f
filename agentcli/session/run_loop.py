"""The run loop of a local session: one graph run streamed as events, stopped by Ctrl-C
mid-answer or between steps, its failures explained and redacted, and the thread index
brought true to the saved state when it ends (the answers indexed for search, the usage,
the status). One part of local.Session: it drives the session's open thread through the
session's LocalGraph.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

from agentcli.agent.model.chat_model import explain
from agentcli.agent.review.approval_seals import allowed_hosts
from agentcli.audit.anchor import advance
from agentcli.errors import AgentcliError, AnswerStopped, Interrupted
from agentcli.events import AssistantMessage, Event, TextDelta, ToolResult
from agentcli.session.background_run import Background
from agentcli.session.local_graph import LocalGraph
from agentcli.session.open_thread import OpenThread
from agentcli.session.review_preview import preview_text
from agentcli.session.run_watcher import RunWatcher, stream_modes, watched
from agentcli.session.stream_events import Translator, stop_reason
from agentcli.session.thread_origin import recorded_server
from agentcli.session.thread_session import run_ended
from agentcli.thread_rows import ThreadStatus
from agentcli.threads.langgraph_internals import Recall

STOP_GRACE_S = 1.0  # after Ctrl-C mid-answer, how long the chat waits for the turn's end
# the stream modes the events are made from (a watcher may add its own: run_watcher.py)
# "values": the state after each step, so the end needs no get_state()
# "checkpoints": the last one's values let the next run skip a walk (Recall)
MODES = ("updates", "custom", "values", "checkpoints")


class RunLoop:
    """Drives the graph: `drive` runs it from an input (a message, a resume, nothing)."""

    def __init__(self, engine: LocalGraph, thread: OpenThread) -> None:
        self.engine = engine
        self.thread = thread
        self._run: Background | None = None  # the run under way, or the last one
        self.watcher: RunWatcher | None = None  # the telemetry, when the person asked for it

    def drive(self, graph_input: Any, asked_at: float | None = None) -> Iterator[Event]:
        """The run's events; a watcher, if any, sees it start, its stream and its end
        (`asked_at`: when the review a Command answers was asked, if known)."""
        events = self._drive(graph_input)
        return watched(self.watcher, self.thread.thread_id, graph_input, events, asked_at)

    def _drive(self, graph_input: Any) -> Iterator[Event]:
        engine, thread_id = self.engine, self.thread.thread_id
        engine.model()
        self._record_origin()
        self.wait_stopped()
        graph, config = engine.graph, engine.config(thread_id)
        context = engine.context(self.thread.workspace)
        context.cancel = threading.Event()
        # the hosts the person allowed for this thread earlier (sealed in its state) pass;
        # another host not listed is a question in the chat, refused elsewhere
        engine.egress.allow_thread(thread_id, self._thread_hosts())
        context.egress_ask = engine.egress.for_thread(thread_id, self.thread.asks_egress)
        engine.forget(thread_id)  # until this run has ended cleanly: read the state if asked
        answers: list[str] = []  # indexed for search when the run ends (see _record)
        seen = Translator(answers.append)
        last_checkpoint: dict[str, Any] | None = None
        try:
            stream = graph.stream(
                graph_input,
                config,
                context=context,
                stream_mode=stream_modes(MODES, self.watcher),
                durability="sync",  # each step is on disk before the next one starts
            )
            self._run = Background(stream, context.cancel if self.thread.soft_ctrl_c else None)
            streaming = False  # the answer's text is coming
            try:
                for mode, chunk in self._run:
                    self._watch(mode, chunk)
                    if mode == "checkpoints":
                        last_checkpoint = chunk
                        continue
                    if mode not in MODES:  # the watcher's own
                        continue
                    for event in seen.events(mode, chunk):
                        streaming = isinstance(event, TextDelta) or (
                            streaming and not isinstance(event, AssistantMessage | ToolResult)
                        )
                        yield event
            except Interrupted:
                if not (streaming or seen.stopped):  # stopped: the node saw it first
                    raise
                yield from self._stop_answer(seen, answers)
            if context.cancel.is_set():  # Ctrl-C between steps: the run ended early
                if seen.stopped:  # ... or just as the answer was stopped
                    yield from self._stop_answer(seen, answers)
                raise Interrupted("interrupted: the run stopped (/retry continues it)")
        except AnswerStopped:
            raise  # the thread is idle, its index written
        except AgentcliError as known:
            known.args = (engine.redactor(str(known)),)
            self.record(engine.state(thread_id), answers, str(known))
            raise
        except Exception as exc:
            error = explain(exc, engine.settings) or AgentcliError(f"the run failed: {exc}")
            error.args = (engine.redactor(str(error)),)
            self.record(engine.state(thread_id), answers, str(error))
            raise error from exc
        except BaseException:  # Ctrl-C, or the consumer stopped reading: keep the index true
            snapshot = engine.state(thread_id)
            unfinished = snapshot.next and not engine.pending(thread_id, snapshot)
            cut = "interrupted before the run finished" if unfinished else None
            self.record(snapshot, answers, cut)
            raise
        final, summary = seen.final, seen.summary(engine.settings)
        saver = engine.store.saver
        if last_checkpoint is not None and isinstance(saver, Recall):
            saver.remember(last_checkpoint["config"], last_checkpoint["values"])
        snapshot = seen.end() or engine.state(thread_id)
        engine.remember(thread_id, snapshot)
        review = engine.pending(thread_id, snapshot)
        stopped = None if review else stop_reason(snapshot.values, engine.settings, thread_id)
        self.record(snapshot, answers, stopped, seen.usage)
        yield from run_ended(thread_id, review, stopped, final, summary, seen.cut_off)

    def _thread_hosts(self) -> set[tuple[str, int]]:
        """The hosts and ports the person allowed for this thread at egress questions, as
        its state keeps them: those with their seal (a client's own entry has none)."""
        engine, thread_id = self.engine, self.thread.thread_id
        # without a host list no command reaches the proxy: the state is not read (a turn
        # reads its thread's state only when it must, tests/unit/agent/test_turn_cost.py)
        if self.thread.row is None or not isinstance(engine.settings.sandbox_network, list):
            return set()
        values = engine.known(thread_id).values or {}
        return allowed_hosts(engine.approval_key, thread_id, values)

    def _record_origin(self) -> None:
        """Record with the thread the model and server this run uses (a flag may have
        chosen others than its record): the next command that continues it uses them."""
        row, settings = self.thread.row, self.engine.settings
        if row is None:
            return
        model, server = settings.model, recorded_server(settings)
        if (row.model, row.base_url) != (model, server):
            self.engine.store.update(self.thread.thread_id, model=model, base_url=server)
            row.model, row.base_url = model, server

    def _stop_answer(self, seen: Translator, answers: list[str]) -> Iterator[Event]:
        """Ctrl-C while the answer streamed: the agent node ends the turn with the text so
        far (graph.ask), marked as interrupted. Its last tokens and that message are shown
        as they come, for a moment; then the thread is idle."""
        assert self._run is not None
        for mode, chunk in self._run.rest(STOP_GRACE_S):
            self._watch(mode, chunk)
            if mode in MODES and mode != "checkpoints":
                yield from seen.events(mode, chunk)
        engine, thread_id = self.engine, self.thread.thread_id
        if self._run.consumed:
            snapshot = seen.end() or engine.state(thread_id)
            engine.remember(thread_id, snapshot)
            self.record(snapshot, answers, None, seen.usage)
        else:  # the server holds the stream: the node ends the turn at its next chunk
            engine.store.update(thread_id, status=ThreadStatus.IDLE, last_error=None)
        raise AnswerStopped("interrupted: the answer was stopped; what was shown is kept")

    def _watch(self, mode: str, chunk: Any) -> None:
        if self.watcher is not None and mode in self.watcher.modes:
            self.watcher.part(mode, chunk)

    def stopping(self) -> bool:
        return self._run is not None and self._run.thread.is_alive()

    def wait_stopped(self) -> None:
        if self._run is not None:
            self._run.wait()

    def stop(self) -> bool:
        """Ctrl-C in the chat (from a signal handler): ask the run under way to stop, or
        to hurry if asked already. False when no run is under way."""
        return self._run is not None and self._run.stop()

    def record(
        self,
        snapshot: Any,
        answers: list[str],
        error: str | None = None,
        usage: dict[str, int] | None = None,
    ) -> None:
        """Keep the thread index true to the saved state, in one transaction when the run
        has ended: on SQLite a second writer during a run waits for the checkpointer's
        commits (a sleep of 1 ms or more each time), so the answers wait until now."""
        engine, thread_id = self.engine, self.thread.thread_id
        store, redactor = engine.store, engine.redactor
        review = None if error else engine.pending(thread_id, snapshot)
        if error:
            status = ThreadStatus.ERROR
        elif review:
            status = ThreadStatus.AWAITING_APPROVAL
        else:
            status = ThreadStatus.IDLE
        count = len(snapshot.values.get("messages", []))
        error = redactor(error) if error else error
        with store.batch():
            for text in answers:
                store.add_text(thread_id, self.thread.turn, "assistant", redactor(text))
            if usage:
                store.add_usage(thread_id, usage)
            store.update(thread_id, status=status, last_error=error, messages=count)
            if preview := preview_text(snapshot.values, review):  # resume draws it at once
                store.keep_preview(thread_id, preview)
            advance(store, engine.approval_key, thread_id, snapshot.values.get("audit", []))
