"""Drives one thread: sends messages, streams events, surfaces reviews, resumes.

Shared by the interactive chat, `run` and `review`. It knows nothing of the terminal:
callers iterate the events and answer a ReviewRequest with `decide()`.

Session is built in layers, a module each: local_graph.py (the model, the graph, the run
context, the thread's saved state), run_loop.py (a run streamed as events, the index kept
true), review_answers.py (answering a review); here the thread operations and the new
message or resume that starts a run.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from langchain_core.messages import HumanMessage

from agentcli.agent.plan import PLAN_FLAG
from agentcli.agent.review.approval_seals import seal_tool
from agentcli.agent.untrusted_text_fence import fence
from agentcli.config import for_model
from agentcli.errors import ConfigError, UsageError
from agentcli.events import Compacted, Event
from agentcli.session.review_answers import ReviewAnswers
from agentcli.session.stream_events import title_of
from agentcli.session.thread_origin import for_thread, recorded_server
from agentcli.threads.thread_rows import ThreadRow, ThreadStatus, new_thread_id


class Session(ReviewAnswers):
    """A thread driven in this process: its graph, its model, its tools, its database."""

    @property
    def location(self) -> str:
        return str(self.workspace)

    def local(self, what: str) -> Session:
        return self

    # -- threads ---------------------------------------------------------------

    def open(self, id_or_prefix: str) -> ThreadRow:
        """Attach to an existing thread; its recorded workspace, model and server are
        reused (unless flags name others: thread_origin.py)."""
        row = self.store.resolve(id_or_prefix)
        self.store.hold(row.thread_id)  # one session per thread: ThreadBusy if taken
        self.row, self.thread_id, self._end = row, row.thread_id, None
        try:
            self.use(for_thread(self.configured, row))
            self.refused = None
        except ConfigError as refused:  # the thread can be read; its model is not asked
            self.use(self.configured)
            self.refused = refused
        if not self.explicit_workspace:
            self.workspace = Path(self.row.workspace)
        elif str(self.workspace) != self.row.workspace:
            self.store.update(self.thread_id, workspace=str(self.workspace))
        self.expired = None
        if self.row.status == ThreadStatus.AWAITING_APPROVAL and self.workspace.is_dir():
            self.expired = self.deny_expired()  # [approval] expire_after
            if self.expired:
                self.row = self.store.resolve(self.thread_id)
        return self.row

    def new_thread(self) -> None:
        """Start over: the next message begins a new thread."""
        self.thread_id, self.row, self._end = new_thread_id(), None, None
        self.refused = None
        self.store.release()

    def set_model(self, name: str) -> None:
        """Use another model from the next turn on (recorded with the thread)."""
        self.use(for_model(self.settings, name))  # with its [models."GLOB"] tables
        if self.row:
            self.store.update(self.thread_id, model=name)
            self.row.model = name

    def allow_tool(self, name: str) -> None:
        """Allow a tool for the rest of this thread, as `A` at a review does."""
        if name not in self.tools:
            raise UsageError(f"unknown tool '{name}' (agentcli tools lists them)")
        if self.row is None:
            raise UsageError("the thread starts with your first message: send one first")
        seal = seal_tool(self.approval_key, self.thread_id, name)
        update = {"allowed_tools": [name], "allowed_seals": [seal]}
        self.graph.update_state(self.config, update, as_node="approve")
        self._end = None  # a new checkpoint: read it again when next needed

    def compact(self) -> Compacted | None:
        """Summarise the thread's older messages now (/compact); None: nothing to cut."""
        from agentcli.agent.context.fit import on_demand
        from agentcli.agent.graph import system_prompt
        from agentcli.session.stream_events import compacted

        if self.row is None or self.pending():
            raise UsageError("nothing to compact: send a message, or decide the pending calls")
        values, context = self._known().values, self.context()
        messages, previous = values.get("messages", []), values.get("compaction")
        tools = list(self.tools.values())
        new = on_demand(self.model(), system_prompt(context), messages, previous, context, tools)
        if new is None:
            return None
        self.graph.update_state(self.config, {"compaction": new}, as_node="agent")
        self._end = None  # a new checkpoint: read it again when next needed
        return compacted(new)

    def open_latest(self) -> ThreadRow:
        """Attach to the most recently updated thread of this workspace."""
        return self.open(self.store.latest(str(self.workspace)).thread_id)

    # -- driving the graph -------------------------------------------------------

    def send(self, text: str, plan: bool = False) -> Iterator[Event]:
        """A new user message (`plan`: in plan mode). A thread with calls awaiting review
        must decide them first."""
        self.model()
        if self.row is None:
            self.store.hold(self.thread_id)
            # the index is printed (threads list, show): a key typed into the message is not
            title = title_of(self.redactor(text))
            self.row = self.store.create(
                self.thread_id,
                title,
                str(self.workspace),
                self.settings.model,
                recorded_server(self.settings),
            )
        else:
            self.refuse_while_waiting()
        self.row.turns += 1
        note, self.row.note = self.row.note, None
        with self.store.batch():  # one commit; "running" until the run records how it ended
            self.store.update(
                self.thread_id, turns=self.row.turns, status=ThreadStatus.RUNNING, note=None
            )
            self.store.add_text(self.thread_id, self.row.turns, "user", self.redactor(text))
        # audit: [] counts as an update of that DeltaChannel, so it snapshots on chat-only
        # turns too and a load never walks back further than SNAPSHOT_EVERY (state.py)
        said = text if not note else f"{fence('agentcli_note', note)}\n\n{text}"
        marks = {PLAN_FLAG: True} if plan else {}
        message = HumanMessage(said, additional_kwargs=marks)
        update = {"messages": [message], "invalid_turns": 0, "audit": []}
        return self._drive(update)

    def resume(self) -> Iterator[Event]:
        """Continue a thread without a new message: retry a failed step."""
        self.refuse_if_nothing_to_continue(self.row is not None and bool(self.state().next))
        self.refuse_while_waiting()  # a cut-off call: running would ask it, or run others
        self.store.update(self.thread_id, status=ThreadStatus.RUNNING)
        return self._drive(None)
