"""Remote mode: a thread on a LangGraph server (`--server URL`), driven through langgraph-sdk.

RemoteSession offers what chat, run and review use of a local Session and yields the same
events, so they do not know which one they drive. The graph, its tools, the model and the
approval rules live on the server (agentcli/server/graph.py); this side sends messages and
decisions, with -y/--approve/--deny and --workspace as the run's context. Files are on the
server, so reviews show a call's arguments rather than a diff against local files.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import replace
from itertools import chain
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage
from langgraph.types import Command

from agentcli.agent.input_bounds import clipped
from agentcli.agent.plan import PLAN_FLAG, graph_steps
from agentcli.agent.review.answers import unchanged
from agentcli.agent.review.argument_check import validate_args
from agentcli.config import Settings
from agentcli.decisions import UNCHANGED, Decision
from agentcli.errors import AgentcliError, ThreadNotFound, UsageError
from agentcli.events import Event, ReviewRequest
from agentcli.policy.approval_policy import Policy
from agentcli.session.prompt_hooks import submitted
from agentcli.session.run_watcher import RunWatcher, stream_modes, watched
from agentcli.session.server_stream import graph_parts, to_messages, unix_time
from agentcli.session.stream_events import (
    Translator,
    policy_decisions,
    review_in,
    stop_reason,
    title_of,
)
from agentcli.session.thread_session import ThreadSession, run_ended
from agentcli.thread_rows import ThreadRow, new_thread_id
from agentcli.threads.on_server import GRAPH_ID, ServerThreads, connect, talking

STREAM_MODES = ("updates", "custom")  # the answer's tokens come as custom parts


class RemoteSession(ThreadSession):
    """One thread on a LangGraph server."""

    soft_ctrl_c = False  # Ctrl-C cancels the run on the server (on_disconnect)

    def __init__(
        self,
        settings: Settings,
        url: str,
        *,
        mode: str = "ask",
        auto_approve: bool = False,
        approve: Iterable[str] = (),
        deny: Iterable[str] = (),
        workspace: Path | None = None,
    ) -> None:
        self.settings = replace(settings, model="")  # the server's, once a run tells it
        self.url = url.rstrip("/")
        self.client = connect(self.url)
        self.store = ServerThreads(self.client, self.url)
        approve, deny = list(approve), list(deny)
        # the approval mode goes to the server, whose sandbox and files it is about
        self.approval: dict[str, Any] = {
            "mode": mode,
            "auto_approve": auto_approve,
            "approve": approve,
            "deny": deny,
        }
        # the flags decide a review that is already pending; the server's rules asked it
        self.policy = Policy.build(flag_allow=approve, flag_deny=deny, auto_approve=auto_approve)
        self.requested = str(workspace) if workspace is not None else None
        self.server_workspace = self.requested or "."  # relative to the server's workspace
        self.workspace = None  # no local files to preview
        self.explicit_workspace = True  # the server's folders are not checked from here
        self.server_url = self.url
        self.warnings: list[str] = []
        self.thread_id = new_thread_id()
        self.row: ThreadRow | None = None
        self.watcher: RunWatcher | None = None  # the telemetry, when the person asked for it

    @property
    def location(self) -> str:
        where = "" if self.server_workspace == "." else f" · workspace {self.server_workspace}"
        return f"{self.url}{where}"

    # -- threads ---------------------------------------------------------------

    def prepare_reading(self) -> None:
        """Nothing to make ahead: the server reads its threads."""

    def prepare(self) -> None:
        """Nothing to make ahead: the server has the model and the graph."""

    def open(self, id_or_prefix: str) -> ThreadRow:
        """Attach to a thread on the server; its recorded workspace is reused."""
        self.row = self.store.resolve(id_or_prefix)
        self.thread_id = self.row.thread_id
        self.settings = replace(self.settings, model=self.row.model)
        if self.requested is None:
            self.server_workspace = self.row.workspace
        elif self.requested != self.row.workspace:
            self.store.update(self.thread_id, workspace=self.requested)
        return self.row

    def open_latest(self) -> ThreadRow:
        rows = self.store.recent(1, workspace=self.server_workspace)
        if not rows:
            raise ThreadNotFound(f"no thread on {self.url} yet: start one with --server")
        return self.open(rows[0].thread_id)

    def new_thread(self) -> None:
        self.thread_id, self.row = new_thread_id(), None

    def state(self) -> dict[str, Any]:
        """The thread's state, its messages as LangChain messages."""
        with talking(self.url):
            state: dict[str, Any] = dict(self.client.threads.get_state(self.thread_id))
        values = state.get("values")
        if isinstance(values, dict):
            state["values"] = {**values, "messages": to_messages(values.get("messages", []))}
        else:
            state["values"] = {}
        return state

    def values(self) -> dict[str, Any]:
        return dict(self.state().get("values") or {})

    def pending(self, state: dict[str, Any] | None = None) -> ReviewRequest | None:
        """The first review the thread waits on. A server that died mid-call asks about
        the call again (agent/review/cut_off_calls.py) when it runs the task again: at its
        restart, which retries the runs it left running, or at the next run."""
        if self.row is None:
            return None
        interrupts = (state or self.state()).get("interrupts") or []
        return review_in(self.thread_id, (item.get("value") for item in interrupts))

    def _shown(self) -> tuple[str | None, int, float | None]:
        """The id of the interrupt `pending` shows, how many the thread waits on, and when
        it was asked (the checkpoint that holds it was made then; a watcher times the wait)."""
        state = self.state()
        interrupts = state.get("interrupts") or []
        asked_at = unix_time(state.get("created_at"))
        for item in interrupts:
            if review_in(self.thread_id, [item.get("value")]):
                return item.get("id"), len(interrupts), asked_at
        return None, len(interrupts), asked_at

    # -- driving the graph -------------------------------------------------------

    def send(self, text: str, plan: bool = False) -> Iterator[Event]:
        from agentcli.agent.outbound import settings_redactor

        text = clipped(text)  # as a local session's: the server's graph would clip it too
        redactor = settings_redactor(self.settings)
        # the person's UserPromptSubmit hooks run here, in this directory, where their
        # config is; the server's own config never runs them for this client
        mode = str(self.approval["mode"])
        text, notes = submitted(
            self.settings, redactor.value, text, self.thread_id, Path.cwd(), mode
        )
        if self.row is None:
            title = title_of(redactor(text))  # as a local session's
            self.row = self.store.create(self.thread_id, title, self.server_workspace, "")
        else:
            self.refuse_while_waiting()
        self.row.turns += 1
        message: dict[str, Any] = {"type": "human", "content": text}
        if plan:
            message["additional_kwargs"] = {PLAN_FLAG: True}
        update = {"messages": [message], "invalid_turns": 0, "audit": []}
        run = self._watched(update, self._drive(input=update))
        return chain(notes, run) if notes else run

    def decide(self, decisions: list[Decision]) -> Iterator[Event]:
        """Answer the review `pending` showed. Several tools tasks cut off by one crash each
        ask on their own: the answer goes to the one shown, by its interrupt id."""
        answer: dict[str, Any] = {"decisions": decisions}
        shown, waiting, asked_at = self._shown()
        resume = {shown: answer} if shown and waiting > 1 else answer
        run = self._drive(command={"resume": resume})
        return self._watched(Command(resume=resume), run, asked_at)

    def set_mode(self, mode: str) -> None:
        """The server decides by its rules in this mode from the next run on."""
        self.approval["mode"] = mode

    def policy_decisions(self, review: ReviewRequest) -> list[Decision] | None:
        allowed = self.state()["values"].get("allowed_tools", [])
        return policy_decisions(self.policy, review, allowed)

    def resume(self) -> Iterator[Event]:
        self.refuse_if_nothing_to_continue(self.row is not None and bool(self.state().get("next")))
        return self._watched(None, self._drive(input=None))

    def watch(self, watcher: RunWatcher) -> None:
        """Let `watcher` see every run of this session on the server, from its stream
        (the telemetry: run_watcher.py)."""
        self.watcher = watcher

    def _watched(
        self, graph_input: Any, events: Iterator[Event], asked_at: float | None = None
    ) -> Iterator[Event]:
        return watched(self.watcher, self.thread_id, graph_input, events, asked_at)

    def check_edit(self, name: str, args: Any, original: Any = None) -> str | None:
        """Built-in tools are checked here; the server checks the others when they run.
        review.UNCHANGED if the edit leaves `original`'s values (the server refuses it too)."""
        from agentcli_tools.registry import BUILTIN_TOOLS

        tool = BUILTIN_TOOLS.get(name)
        if tool is not None:
            problem = validate_args(tool, args)
        else:
            problem = None if isinstance(args, dict) else "arguments must be a JSON object"
        if problem is None and original is not None and unchanged(tool, original, args):
            return UNCHANGED
        return problem

    def _drive(self, **run: Any) -> Iterator[Event]:
        seen, s, watcher = Translator(), self.settings, self.watcher
        modes: list[Any] = stream_modes(STREAM_MODES, watcher)  # the SDK's Literal names
        context: dict[str, Any] = {"workspace": self.server_workspace, "approval": self.approval}
        try:
            with talking(self.url):
                parts = self.client.runs.stream(
                    self.thread_id,
                    GRAPH_ID,
                    stream_mode=modes,
                    context=context,
                    durability="sync",
                    on_disconnect="cancel",  # Ctrl-C here stops the run there
                    multitask_strategy="reject",  # one client at a time on a thread
                    config={"recursion_limit": graph_steps(s.max_steps, s.max_replans)},
                    **run,
                )
                for mode, chunk in graph_parts(parts):
                    if watcher is not None and mode in watcher.modes:
                        watcher.part(mode, chunk)
                    if mode in STREAM_MODES:  # not a mode only the watcher reads
                        yield from seen.events(mode, chunk)
        except AgentcliError as exc:
            if not isinstance(exc, UsageError):  # busy: another client's run, not an error
                self._record(seen, str(exc))
            raise
        state = self.state()
        self._record(seen, None, state["values"])
        summary = seen.summary(self.settings)
        review = self.pending(state)
        stopped = None if review else stop_reason(state["values"], self.settings, self.thread_id)
        yield from run_ended(self.thread_id, review, stopped, seen.final, summary, seen.cut_off)

    def _record(self, seen: Translator, error: str | None, values: Any = None) -> None:
        """Keep the thread's metadata (its index entry) true: counts, tokens, the model."""
        if self.row is None:
            return
        row = self.row
        row.input_tokens += seen.usage.get("input_tokens", 0)
        row.output_tokens += seen.usage.get("output_tokens", 0)
        fields: dict[str, Any] = {
            "turns": row.turns,
            "input_tokens": row.input_tokens,
            "output_tokens": row.output_tokens,
            "last_error": error,
        }
        messages = (values or {}).get("messages", [])
        if messages:
            fields["messages"] = len(messages)
            answers = [m for m in messages if isinstance(m, AIMessage)]
            model = answers[-1].response_metadata.get("model_name") if answers else None
            if model:
                fields["model"] = row.model = model
                self.settings = replace(self.settings, model=model)  # for its price
        self.store.update(self.thread_id, **fields)
