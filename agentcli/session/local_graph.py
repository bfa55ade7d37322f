"""A thread's graph in this process, and what a local run is built from: the session's
settings, tools, secrets and approval key, the chat model and the compiled graph (each made
on first use), the RunContext the nodes read; and the thread's saved state read through
the graph: what it waits on, and the review pending.

The first layer of local.Session: run_loop.py drives the graph, review_answers.py answers
its reviews, local.py holds the thread operations.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool

from agentcli.agent.graph import build_graph
from agentcli.agent.model.chat_model import make_model
from agentcli.agent.model.retries import Retries
from agentcli.agent.outbound import guard_outbound
from agentcli.agent.plan import graph_steps
from agentcli.agent.review.approval_seals import ApprovalKey
from agentcli.agent.secrets import (
    NEVER_PASS,
    hide_environment,
    redact_saved_errors,
    session_redactor,
)
from agentcli.agent.state import RunContext
from agentcli.agent.toolset.sandboxing import sandbox_of
from agentcli.agent.waiting import waiting as waiting_on
from agentcli.config import Settings
from agentcli.errors import ConfigError, UsageError
from agentcli.events import ReviewRequest
from agentcli.policy.approval_policy import Policy
from agentcli.session.background_run import Background
from agentcli.session.stream_events import review_in
from agentcli.session.thread_origin import hint_flags, recorded_server
from agentcli.session.thread_session import ThreadSession
from agentcli.snapshots.call_snapshots import snapshots_of
from agentcli.threads.store import Store
from agentcli.threads.thread_rows import ThreadRow, new_thread_id


class LocalGraph(ThreadSession):
    """What a thread driven in this process runs with: its graph, its model, its tools, its
    database; and its saved state, read through the graph."""

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
        self.store: Store = store
        self.policy = policy
        self.sandbox = sandbox_of(settings)
        self.workspace: Path = (workspace or Path.cwd()).resolve()
        self.explicit_workspace = workspace is not None
        self.tools = {tool.name: tool for tool in tools}
        self._model = model
        self._given_model = model is not None  # a test's model: kept whatever the thread
        self._graph: Any = None
        self._run: Background | None = None
        self.soft_ctrl_c = False  # chat: Ctrl-C stops the run and returns to the prompt
        self.thread_id = new_thread_id()
        self.row: ThreadRow | None = None
        self._end: Any = None  # how the last run left the thread (see _known)
        self._window: int | None = None  # the model's context window; 0: unknown
        self.refused: ConfigError | None = None  # why the open thread's model is not asked

    def model(self) -> BaseChatModel:
        """The chat model, made on first use: a bad model config fails here, before a run,
        and so does a thread whose recorded server the key may not go to (thread_origin)."""
        if self.refused is not None:
            raise self.refused
        if self._model is None:
            self._model = make_model(self.settings)
        return self._model

    def use(self, settings: Settings) -> None:
        """Run with `settings` from now on: the model client, the graph and the window are
        made again on first use if they differ."""
        if settings == self.settings:
            return
        self.settings = settings
        if not self._given_model:
            self._model = None
        self._graph = None
        self._window = None

    def record_origin(self) -> None:
        """Record with the thread the model and server this run uses (a flag may have
        chosen others than its record): the next command that continues it uses them."""
        if self.row is None:
            return
        model, server = self.settings.model, recorded_server(self.settings)
        if (self.row.model, self.row.base_url) != (model, server):
            self.store.update(self.thread_id, model=model, base_url=server)
            self.row.model, self.row.base_url = model, server

    @property
    def hint_flags(self) -> str:
        return hint_flags(self.settings)

    def prepare(self) -> None:
        """Make the model client and compile the graph now, not at the first message (the
        chat does this in the background while the person types)."""
        self.model()
        self.graph  # noqa: B018 (compiled on first access)
        self.context_window()

    @property
    def graph(self) -> Any:
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
            from agentcli.agent.context.window import probe

            s = self.settings
            window = s.context_window
            if not window and s.compact and s.base_url:
                window = probe(s.base_url, s.model, s.api_key) or 0
            self._window = window
        return self._window or None

    @property
    def config(self) -> dict[str, Any]:
        limit = graph_steps(self.settings.max_steps, self.settings.max_replans)
        return {"configurable": {"thread_id": self.thread_id}, "recursion_limit": limit}

    def context(self, *, ask_window: bool = True) -> RunContext:
        """What the nodes read; `ask_window=False`: a run that asks no model (an expiry)
        does not ask the server for the context window either."""
        if not self.workspace.is_dir():
            raise UsageError(f"workspace {self.workspace} is not a directory")
        s = self.settings
        return RunContext(
            workspace=self.workspace,
            shell_timeout=s.shell_timeout,
            max_output_chars=s.max_output_chars,
            allow_private_urls=s.allow_private_urls,
            url_check=self.policy.redirect_refusal,
            env_passthrough=tuple(s.env_passthrough),
            env_never=NEVER_PASS,
            redactor=self.redactor,
            policy=self.policy,
            max_steps=s.max_steps,
            max_invalid_turns=s.max_invalid_turns,
            max_replans=s.max_replans,
            system_prompt=s.system_prompt,
            journal=self.store,
            approval_key=self.approval_key,
            sandbox=self.sandbox,
            snapshots=snapshots_of(s),
            context_window=self.context_window() if ask_window else s.context_window or None,
            compact=s.compact,
            compact_threshold=s.compact_threshold,
            compact_keep=s.compact_keep,
            tool_result_share=s.tool_result_share,
            answer_reserve=s.answer_reserve,
        )

    def state(self) -> Any:
        """The thread's saved state, read in full (every message deserialised)."""
        return self.graph.get_state(self.config)

    def values(self) -> dict[str, Any]:
        return dict(self.state().values)

    def _known(self) -> Any:
        """The thread's state as far as reviews and the index need it: `values` and
        `interrupts`. While this session holds the thread's lock nothing else changes the
        thread, so how the last run left it (its stream showed it) is still true: a long
        chat reads the whole thread once, when it is opened, not at every turn."""
        if self._end is None:
            if self._run is not None:
                self._run.wait()  # a run stopped by Ctrl-C may still be ending its step
            self._end = self.state()
        return self._end

    def waiting(self, snapshot: Any = None) -> list[Any]:
        """What the thread waits on: its interrupts, then the questions its calls cut off
        by a crash will ask when their tasks run again (agent/review/cut_off_calls.py),
        found without running."""
        known = snapshot or self._known()
        return waiting_on(known, self.store, self.thread_id)

    def pending(self, snapshot: Any = None) -> ReviewRequest | None:
        """The calls of this thread waiting for a decision, if any."""
        if self.row is None:
            return None
        return review_in(self.thread_id, (item.value for item in self.waiting(snapshot)))
