"""The run loop of a local session: one graph run streamed as events, stopped by Ctrl-C
mid-answer or between steps, its failures explained and redacted, and the thread index
brought true to the saved state when it ends (the answers indexed for search, the usage,
the status).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

from agentcli.agent.model.chat_model import explain
from agentcli.errors import AgentcliError, AnswerStopped, Interrupted
from agentcli.events import AssistantMessage, Event, TextDelta, ToolResult
from agentcli.session.audit_anchor import advance
from agentcli.session.background_run import Background
from agentcli.session.local_graph import LocalGraph
from agentcli.session.stream_events import Translator, stop_reason
from agentcli.threads.langgraph_internals import Recall
from agentcli.threads.thread_rows import ThreadStatus

STOP_GRACE_S = 1.0  # after Ctrl-C mid-answer, how long the chat waits for the turn's end


class RunLoop(LocalGraph):
    """Drives the graph: `_drive` runs it from an input (a message, a resume, nothing)."""

    def _drive(self, graph_input: Any) -> Iterator[Event]:
        self.model()
        self.record_origin()
        if self._run is not None:
            self._run.wait()
        graph, config, context = self.graph, self.config, self.context()
        context.cancel = threading.Event()
        answers: list[str] = []  # indexed for search when the run ends (see _record)
        seen = Translator(answers.append)
        last_checkpoint: dict[str, Any] | None = None
        self._end = None  # until this run has ended cleanly: read the state if asked
        try:
            stream = graph.stream(
                graph_input,
                config,
                context=context,
                # "values": the state after each step, so the end needs no get_state()
                # "checkpoints": the last one's values let the next run skip a walk (Recall)
                stream_mode=["updates", "custom", "values", "checkpoints"],
                durability="sync",  # each step is on disk before the next one starts
            )
            self._run = Background(stream, context.cancel if self.soft_ctrl_c else None)
            streaming = False  # the answer's text is coming
            try:
                for mode, chunk in self._run:
                    if mode == "checkpoints":
                        last_checkpoint = chunk
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
            known.args = (self.redactor(str(known)),)
            self._record(self.state(), answers, str(known))
            raise
        except Exception as exc:
            error = explain(exc, self.settings) or AgentcliError(f"the run failed: {exc}")
            error.args = (self.redactor(str(error)),)
            self._record(self.state(), answers, str(error))
            raise error from exc
        except BaseException:  # Ctrl-C, or the consumer stopped reading: keep the index true
            snapshot = self.state()
            unfinished = snapshot.next and not self.pending(snapshot)
            cut = "interrupted before the run finished" if unfinished else None
            self._record(snapshot, answers, cut)
            raise
        final, summary = seen.final, seen.summary(self.settings)
        saver = self.store.saver
        if last_checkpoint is not None and isinstance(saver, Recall):
            saver.remember(last_checkpoint["config"], last_checkpoint["values"])
        self._end = snapshot = seen.end() or self.state()
        review = self.pending(snapshot)
        limit = self.settings.max_invalid_turns
        stopped = None if review else stop_reason(snapshot.values, limit, self.thread_id)
        self._record(snapshot, answers, stopped, seen.usage)
        yield from self.run_ended(review, stopped, final, summary, seen.cut_off)

    def _stop_answer(self, seen: Translator, answers: list[str]) -> Iterator[Event]:
        """Ctrl-C while the answer streamed: the agent node ends the turn with the text so
        far (graph.ask), marked as interrupted. Its last tokens and that message are shown
        as they come, for a moment; then the thread is idle."""
        assert self._run is not None
        for mode, chunk in self._run.rest(STOP_GRACE_S):
            if mode != "checkpoints":
                yield from seen.events(mode, chunk)
        if self._run.consumed:
            self._end = snapshot = seen.end() or self.state()
            self._record(snapshot, answers, None, seen.usage)
        else:  # the server holds the stream: the node ends the turn at its next chunk
            self.store.update(self.thread_id, status=ThreadStatus.IDLE, last_error=None)
        raise AnswerStopped("interrupted: the answer was stopped; what was shown is kept")

    def stopping(self) -> bool:
        return self._run is not None and self._run.thread.is_alive()

    def wait_stopped(self) -> None:
        if self._run is not None:
            self._run.wait()

    def stop(self) -> bool:
        """Ctrl-C in the chat (from a signal handler): ask the run under way to stop, or
        to hurry if asked already. False when no run is under way."""
        return self._run is not None and self._run.stop()

    def _record(
        self,
        snapshot: Any,
        answers: list[str],
        error: str | None = None,
        usage: dict[str, int] | None = None,
    ) -> None:
        """Keep the thread index true to the saved state, in one transaction when the run
        has ended: on SQLite a second writer during a run waits for the checkpointer's
        commits (a sleep of 1 ms or more each time), so the answers wait until now."""
        if error:
            status = ThreadStatus.ERROR
        else:
            status = ThreadStatus.AWAITING_APPROVAL if self.pending(snapshot) else ThreadStatus.IDLE
        count = len(snapshot.values.get("messages", []))
        turn = self.row.turns if self.row else 0
        error = self.redactor(error) if error else error
        with self.store.batch():
            for text in answers:
                self.store.add_text(self.thread_id, turn, "assistant", self.redactor(text))
            if usage:
                self.store.add_usage(self.thread_id, usage)
            self.store.update(self.thread_id, status=status, last_error=error, messages=count)
            advance(self.store, self.approval_key, self.thread_id, snapshot.values.get("audit", []))
