"""A thread's graph in this process, and what a local run is built from: the session's
settings, tools, secrets and approval key, the chat model and the compiled graph (each made
on first use), the RunContext the nodes read (agent/run_context.py); and a thread's saved
state read through the graph: what it waits on, and the review pending.

One part of local.Session, beside run_loop.py (a run driven) and review_answers.py (a
review answered).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentcli_tools.egress_questions import EgressQuestions
from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool

from agentcli.agent.agent_graph import build_graph
from agentcli.agent.context.fixed_part import Offer
from agentcli.agent.model.chat_model import make_model
from agentcli.agent.model.retries import Retries
from agentcli.agent.outbound import guard_outbound
from agentcli.agent.plan import graph_steps
from agentcli.agent.run_context import run_context
from agentcli.agent.secrets import hide_environment, redact_saved_errors, session_redactor
from agentcli.agent.state import RunContext
from agentcli.agent.toolset.sandboxing import sandbox_of
from agentcli.agent.waiting import waiting as waiting_on
from agentcli.config import Settings
from agentcli.errors import ConfigError, UsageError
from agentcli.events import ReviewRequest
from agentcli.policy.approval_policy import Policy
from agentcli.session.stream_events import review_in
from agentcli.threads.store import Store
from agentcli.threads.store_key import ApprovalKey


class LocalGraph:
    """What a thread driven in this process runs with: its graph, its model, its tools, its
    database; and the threads' saved state, read through the graph.

    How the last run left a thread (its stream showed it) is kept per thread id: while the
    session holds the thread's lock nothing else changes it, so a long chat reads the whole
    thread once, when it is opened, not at every turn. Every write through here (a run, an
    `update_state`) forgets what was kept."""

    def __init__(
        self,
        settings: Settings,
        store: Store,
        policy: Policy,
        *,
        model: BaseChatModel | None = None,
        tools: Sequence[BaseTool] | None = None,
    ) -> None:
        self.warnings: list[str] = []  # from loading the tools: for the caller to show
        # the session's secrets: redacted from tool output, stored errors and all that leaves
        # (secrets.py, outbound.py); first, as MCP servers' logs started by load_tools use it
        self.redactor = session_redactor(settings)
        guard_outbound(self.redactor)
        if tools is None:
            from agentcli.agent.toolset.loading import load_tools

            tools = [item.tool for item in load_tools(settings, warn=self.warnings.append)]
        self.settings = settings
        # this command's settings; a thread it opens may run on another model and server
        # (thread_origin.for_thread), worked out from these each time
        self.configured = settings
        hide_environment()
        # seals what the review approves, checked by the tools node (agent/review/approval_seals.py)
        self.approval_key = ApprovalKey.of_store(store)  # the store's: decided from anywhere
        self.store = store
        self.policy = policy
        self.sandbox = sandbox_of(settings)
        # the egress proxy's questions and the hosts the person's answers allowed, for the
        # session's lifetime (tools/egress_questions.py)
        self.egress = EgressQuestions()
        self.tools = {tool.name: tool for tool in tools}
        self._model = model
        self._given_model = model is not None  # a test's model: kept whatever the thread
        self._graph: Any = None
        self._window: int | None = None  # the model's context window; 0: unknown
        # the model, the graph and the window are made on first use, by whichever thread
        # needs them first: the chat's start-up thread (prepare) or the main one
        self._making = threading.RLock()
        self.refused: ConfigError | None = None  # why the open thread's model is not asked
        self._known: dict[str, Any] = {}  # thread id: its state as the last run left it

    def model(self) -> BaseChatModel:
        """The chat model, made on first use: a bad model config fails here, before a run,
        and so does a thread whose recorded server the key may not go to (thread_origin)."""
        if self.refused is not None:
            raise self.refused
        if self._model is None:
            with self._making:
                if self._model is None:
                    self._model = make_model(self.settings)
        return self._model

    def use(self, settings: Settings) -> None:
        """Run with `settings` from now on (/model, a thread's recorded model and server):
        the model client, the graph and the window are made again on first use."""
        with self._making:  # not while the chat's start-up thread makes the old ones
            if settings == self.settings:
                return
            self.settings = settings
            if not self._given_model:
                self._model = None
            self._graph = self._window = None

    def prepare_reading(self) -> None:
        """Compile the graph now: what reading the thread and showing its review needs."""
        self.graph  # noqa: B018 (compiled on first access)

    def prepare(self) -> None:
        """Compile the graph, make the model client (the OpenAI SDK is the slowest import)
        and learn its context window now, not at the first message (the chat does this in
        the background while the person types or reads a review)."""
        self.prepare_reading()
        self.model()
        self.context_window()

    @property
    def graph(self) -> Any:
        if self._graph is None:  # made once: the lock only while it may be made
            with self._making:
                if self._graph is None:
                    retry = Retries.of(self.settings)
                    tools = list(self.tools.values())
                    builder = build_graph(
                        self.model, tools, retry=retry, tool_calls=self.settings.tool_calls
                    )
                    redact_saved_errors(self.store.saver, self.redactor)
                    self._graph = builder.compile(checkpointer=self.store.saver)
        return self._graph

    def context_window(self) -> int | None:
        """The model's window: configured, else asked of the server once per session."""
        if self._window is None:
            with self._making:
                if self._window is None:
                    from agentcli.agent.context.window import probe

                    s = self.settings
                    window = s.context_window
                    if not window and s.compact and s.base_url:
                        window = probe(s.base_url, s.model, s.api_key) or 0
                    self._window = window
        return self._window or None

    def fixed_part(self, workspace: Path) -> Offer | None:
        """The fixed part of a request in `workspace` against the model's window (what is
        offered, what is left out: agent/context/fixed_part.py); None when the window is
        unknown, since then nothing is left out."""
        window = self.context_window()
        if window is None:
            return None
        from agentcli.agent.fixed_part_report import offer_for

        return offer_for(self.settings, list(self.tools.values()), workspace, window)

    def config(self, thread_id: str) -> dict[str, Any]:
        limit = graph_steps(self.settings.max_steps, self.settings.max_replans)
        return {"configurable": {"thread_id": thread_id}, "recursion_limit": limit}

    def context(self, workspace: Path, *, ask_window: bool = True) -> RunContext:
        """What the nodes read; `ask_window=False`: a run that asks no model (an expiry)
        does not ask the server for the context window either."""
        if not workspace.is_dir():
            raise UsageError(f"workspace {workspace} is not a directory")
        s = self.settings
        return run_context(
            s,
            workspace=workspace,
            policy=self.policy,
            redactor=self.redactor,
            journal=self.store,
            approval_key=self.approval_key,
            sandbox=self.sandbox,
            context_window=self.context_window() if ask_window else s.context_window or None,
        )

    # -- a thread's saved state ----------------------------------------------------

    def state(self, thread_id: str) -> Any:
        """The thread's saved state, read in full (every message deserialised)."""
        return self.graph.get_state(self.config(thread_id))

    def known(self, thread_id: str) -> Any:
        """The thread's state as far as reviews and the index need it: `values` and
        `interrupts`, read once and then kept until something writes the thread."""
        if thread_id not in self._known:
            self._known[thread_id] = self.state(thread_id)
        return self._known[thread_id]

    def remember(self, thread_id: str, snapshot: Any) -> None:
        """How a run just left the thread (its stream's last values)."""
        self._known[thread_id] = snapshot

    def forget(self, thread_id: str) -> None:
        """The thread is being written: read it again when next needed."""
        self._known.pop(thread_id, None)

    def update_state(self, thread_id: str, values: dict[str, Any], as_node: str) -> None:
        """Write `values` to the thread as if `as_node` had (a new checkpoint)."""
        self.forget(thread_id)
        self.graph.update_state(self.config(thread_id), values, as_node=as_node)

    def waiting(self, thread_id: str, snapshot: Any = None) -> list[Any]:
        """What the thread waits on: its interrupts, then the questions its calls cut off
        by a crash will ask when their tasks run again (agent/review/cut_off_calls.py),
        found without running."""
        known = snapshot or self.known(thread_id)
        return waiting_on(known, self.store, thread_id)

    def pending(self, thread_id: str, snapshot: Any = None) -> ReviewRequest | None:
        """The calls of the thread waiting for a decision, if any."""
        return review_in(thread_id, (item.value for item in self.waiting(thread_id, snapshot)))
