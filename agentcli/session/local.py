"""Drives one thread: sends messages, streams events, surfaces reviews, resumes.

Shared by the interactive chat, `run` and `review`. It knows nothing of the terminal:
callers iterate the events and answer a ReviewRequest with `decide()`.

Session is one object with three parts, a module each, sharing the open thread
(open_thread.py): local_graph.py (the model, the graph, the run context, a thread's saved
state), run_loop.py (a run streamed as events, the index kept true), review_answers.py
(answering a review). Here: the thread operations and the new message or resume that
starts a run.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from itertools import chain
from pathlib import Path
from typing import Any

from agentcli_tools.egress_questions import CONFIG
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage
from langchain_core.tools import BaseTool

from agentcli.agent.context.fixed_part import Offer
from agentcli.agent.input_bounds import clipped
from agentcli.agent.plan import PLAN_FLAG
from agentcli.agent.review.approval_seals import seal_tool
from agentcli.agent.untrusted_text_fence import fence
from agentcli.config import Settings, default_config_path, for_model
from agentcli.config.network_file import add_network_host, network_entry
from agentcli.decisions import Decision
from agentcli.errors import ConfigError, UsageError
from agentcli.events import Compacted, Event, ReviewRequest
from agentcli.policy.approval_policy import Policy
from agentcli.session.local_graph import LocalGraph
from agentcli.session.open_thread import OpenThread
from agentcli.session.prompt_hooks import submitted
from agentcli.session.review_answers import ReviewAnswers
from agentcli.session.run_loop import RunLoop
from agentcli.session.run_watcher import RunWatcher
from agentcli.session.stream_events import title_of
from agentcli.session.thread_origin import for_thread, hint_flags, recorded_server
from agentcli.session.thread_session import ThreadSession
from agentcli.thread_rows import ThreadRow, ThreadStatus, new_thread_id
from agentcli.threads.store import Store


class Session(ThreadSession):
    """A thread driven in this process: its graph, its model, its tools, its database."""

    def __init__(
        self,
        settings: Settings,
        store: Store,
        policy: Policy,
        *,
        workspace: Path | None = None,
        model: BaseChatModel | None = None,
        tools: Sequence[BaseTool] | None = None,
    ) -> None:
        self.engine = LocalGraph(settings, store, policy, model=model, tools=tools)
        self.thread = OpenThread(
            new_thread_id(), (workspace or Path.cwd()).resolve(), workspace is not None
        )
        self.runs = RunLoop(self.engine, self.thread)
        self.answers = ReviewAnswers(self.engine, self.thread, self.runs)
        self.store: Store = store
        self.warnings = self.engine.warnings
        self.expired = None

    # -- what the parts hold, as callers and ThreadSession name it ---------------

    def fixed_part(self) -> Offer | None:
        """The fixed part of this thread's requests against the model's window."""
        return self.engine.fixed_part(self.thread.workspace)

    @property
    def hint_flags(self) -> str:
        return hint_flags(self.settings)

    @property
    def settings(self) -> Settings:
        return self.engine.settings

    @settings.setter
    def settings(self, settings: Settings) -> None:
        self.engine.settings = settings

    @property
    def policy(self) -> Policy:
        return self.engine.policy

    @policy.setter
    def policy(self, policy: Policy) -> None:
        self.engine.policy = policy

    @property
    def tools(self) -> dict[str, BaseTool]:
        return self.engine.tools

    @property
    def redactor(self) -> Any:
        return self.engine.redactor

    @property
    def approval_key(self) -> Any:
        return self.engine.approval_key

    @property
    def thread_id(self) -> str:
        return self.thread.thread_id

    @thread_id.setter
    def thread_id(self, thread_id: str) -> None:
        self.thread.thread_id = thread_id

    @property
    def row(self) -> ThreadRow | None:
        return self.thread.row

    @row.setter
    def row(self, row: ThreadRow | None) -> None:
        self.thread.row = row

    @property
    def workspace(self) -> Path:
        return self.thread.workspace

    @workspace.setter
    def workspace(self, workspace: Path) -> None:
        self.thread.workspace = workspace

    @property
    def explicit_workspace(self) -> bool:
        return self.thread.explicit_workspace

    @explicit_workspace.setter
    def explicit_workspace(self, explicit: bool) -> None:
        self.thread.explicit_workspace = explicit

    @property
    def asks_egress(self) -> bool:  # type: ignore[override]
        return self.thread.asks_egress

    @asks_egress.setter
    def asks_egress(self, asks: bool) -> None:
        self.thread.asks_egress = asks

    @property
    def soft_ctrl_c(self) -> bool:
        return self.thread.soft_ctrl_c

    @soft_ctrl_c.setter
    def soft_ctrl_c(self, soft: bool) -> None:
        self.thread.soft_ctrl_c = soft

    def model(self) -> BaseChatModel:
        return self.engine.model()

    def prepare_reading(self) -> None:
        self.engine.prepare_reading()

    def prepare(self) -> None:
        self.engine.prepare()

    @property
    def graph(self) -> Any:
        return self.engine.graph

    @property
    def config(self) -> dict[str, Any]:
        return self.engine.config(self.thread_id)

    def state(self) -> Any:
        """The thread's saved state, read in full (every message deserialised)."""
        return self.engine.state(self.thread_id)

    def values(self) -> dict[str, Any]:
        return dict(self.state().values)

    def _known(self) -> Any:
        return self.answers._known()

    def pending(self, snapshot: Any = None) -> ReviewRequest | None:
        """The calls of this thread waiting for a decision, if any."""
        if self.row is None:
            return None
        return self.engine.pending(self.thread_id, snapshot or self._known())

    @property
    def location(self) -> str:
        return str(self.workspace)

    def local(self, what: str) -> Session:
        return self

    # -- threads ---------------------------------------------------------------

    def open(self, id_or_prefix: str) -> ThreadRow:
        """Attach to an existing thread; its recorded workspace is reused."""
        row = self.store.resolve(id_or_prefix)
        self.store.hold(row.thread_id)  # one session per thread: ThreadBusy if taken
        self.thread.row, self.thread.thread_id = row, row.thread_id
        self.engine.forget(row.thread_id)  # changed since this process last saw it, maybe
        engine = self.engine
        try:
            engine.use(for_thread(engine.configured, row))
            engine.refused = None
        except ConfigError as refused:  # the thread can be read; its model is not asked
            engine.use(engine.configured)
            engine.refused = refused
        if not self.explicit_workspace:
            self.thread.workspace = Path(row.workspace)
        elif str(self.workspace) != row.workspace:
            self.store.update(self.thread_id, workspace=str(self.workspace))
        self.expired = None
        if row.status == ThreadStatus.AWAITING_APPROVAL and self.workspace.is_dir():
            self.expired = self.answers.deny_expired()  # [approval] expire_after
            if self.expired:
                self.thread.row = row = self.store.resolve(self.thread_id)
        return row

    def new_thread(self) -> None:
        """Start over: the next message begins a new thread."""
        self.thread.thread_id, self.thread.row = new_thread_id(), None
        self.engine.refused = None
        self.store.release()

    def set_model(self, name: str) -> None:
        """Use another model from the next turn on (recorded with the thread)."""
        self.engine.use(for_model(self.settings, name))  # with its [models."GLOB"] tables
        if self.row:
            self.store.update(self.thread_id, model=name)
            self.row.model = name

    def set_mode(self, mode: str) -> None:
        """The approval mode from the next run on: the policy's, which each run's context
        carries (local_graph.py)."""
        self.policy = replace(self.policy, mode=mode)

    def allow_tool(self, name: str) -> None:
        """Allow a tool for the rest of this thread, as `A` at a review does."""
        if name not in self.tools:
            raise UsageError(f"unknown tool '{name}' (agentcli tools lists them)")
        if self.row is None:
            raise UsageError("the thread starts with your first message: send one first")
        seal = seal_tool(self.approval_key, self.thread_id, name)
        update = {"allowed_tools": [name], "allowed_seals": [seal]}
        self.engine.update_state(self.thread_id, update, as_node="approve")

    def compact(self) -> Compacted | None:
        """Summarise the thread's older messages now (/compact); None: nothing to cut."""
        from agentcli.agent.agent_graph import system_prompt
        from agentcli.agent.context.fit import on_demand
        from agentcli.session.stream_events import compacted

        if self.row is None or self.pending():
            raise UsageError("nothing to compact: send a message, or decide the pending calls")
        values, context = self._known().values, self.engine.context(self.workspace)
        messages, previous = values.get("messages", []), values.get("compaction")
        tools = list(self.tools.values())
        new = on_demand(self.model(), system_prompt(context), messages, previous, context, tools)
        if new is None:
            return None
        self.engine.update_state(self.thread_id, {"compaction": new}, as_node="agent")
        return compacted(new)

    def open_latest(self) -> ThreadRow:
        """Attach to the most recently updated thread of this workspace."""
        return self.open(self.store.latest(str(self.workspace)).thread_id)

    # -- driving the graph -------------------------------------------------------

    def send(self, text: str, plan: bool = False) -> Iterator[Event]:
        """A new user message (`plan`: in plan mode). A thread with calls awaiting review
        must decide them first. Over the bound a thread takes, the text is clipped here, so
        its index keeps no more than the thread does (agent/input_bounds.py)."""
        text = clipped(text)
        self.model()
        text, notes = submitted(
            self.settings,
            getattr(self.redactor, "value", None),
            text,
            self.thread_id,
            self.workspace,
            self.policy.mode,
        )
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
        return chain(notes, self.runs.drive(update)) if notes else self.runs.drive(update)

    def resume(self) -> Iterator[Event]:
        """Continue a thread without a new message: retry a failed step."""
        self.refuse_if_nothing_to_continue(self.row is not None and bool(self.state().next))
        self.refuse_while_waiting()  # a cut-off call: running would ask it, or run others
        self.store.update(self.thread_id, status=ThreadStatus.RUNNING)
        return self.runs.drive(None)

    def decide(self, decisions: list[Decision]) -> Iterator[Event]:
        return self.answers.decide(decisions)

    def policy_decisions(self, review: ReviewRequest) -> list[Decision] | None:
        return self.answers.policy_decisions(review)

    def check_edit(self, name: str, args: Any, original: Any = None) -> str | None:
        return self.answers.check_edit(name, args, original)

    def deny_expired(self) -> ReviewRequest | None:
        return self.answers.deny_expired()

    # -- the egress proxy's questions (tools/egress_questions.py) -----------------------

    def egress_waiting(self, question_id: str) -> bool:
        return self.engine.egress.waiting(question_id) is not None

    def answer_egress(self, question_id: str, choice: str) -> bool:
        desk = self.engine.egress
        question = desk.waiting(question_id)
        if question is None:
            return False
        if choice == CONFIG:  # the person's own config file: never the workspace's
            path = self.settings.config_path or default_config_path()
            add_network_host(path, network_entry(question.host, question.port))
        return desk.answer(question_id, choice)

    def watch(self, watcher: RunWatcher) -> None:
        """Let `watcher` see every run of this session (the telemetry: run_watcher.py)."""
        self.runs.watcher = watcher

    # -- Ctrl-C -------------------------------------------------------------------

    def stop(self) -> bool:
        return self.runs.stop()

    def stopping(self) -> bool:
        return self.runs.stopping()

    def wait_stopped(self) -> None:
        self.runs.wait_stopped()
