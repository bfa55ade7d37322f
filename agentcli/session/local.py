"""Drives one thread: sends messages, streams events, surfaces reviews, resumes.

Shared by the interactive chat, `run` and `review`. It knows nothing of the terminal:
callers iterate the events and answer a ReviewRequest with `decide()`.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from agentcli_tools.context import ToolContext
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage
from langchain_core.tools import BaseTool
from langgraph.types import Command

from agentcli.agent.graph import build_graph
from agentcli.agent.model.chat_model import explain, make_model
from agentcli.agent.model.retries import Retries
from agentcli.agent.review.answers import UNCHANGED, checked, unchanged
from agentcli.agent.review.approval_seals import ApprovalKey, allowed_tools, seal_tool
from agentcli.agent.review.argument_check import validate_args
from agentcli.agent.review.cut_off_calls import cut_off
from agentcli.agent.review.preconditions import precondition
from agentcli.agent.secrets import (
    NEVER_PASS,
    hide_environment,
    redact_saved_errors,
    session_redactor,
)
from agentcli.agent.state import RunContext
from agentcli.agent.toolset.sandboxing import sandbox_of
from agentcli.config import Settings, data_dir, for_model
from agentcli.decisions import Decision
from agentcli.errors import (
    AgentcliError,
    AnswerStopped,
    Interrupted,
    ThreadBusy,
    UsageError,
)
from agentcli.events import (
    AssistantMessage,
    Compacted,
    Event,
    ReviewRequest,
    TextDelta,
    ToolResult,
)
from agentcli.policy.approval_policy import Policy
from agentcli.session.background_run import Background
from agentcli.session.stream_events import (
    Translator,
    policy_decisions,
    review_in,
    stop_reason,
    title_of,
)
from agentcli.session.thread_session import ThreadSession
from agentcli.threads.langgraph_internals import Recall
from agentcli.threads.store import Store
from agentcli.threads.thread_rows import ThreadRow, ThreadStatus, new_thread_id

STOP_GRACE_S = 1.0  # after Ctrl-C mid-answer, how long the chat waits for the turn's end


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
        self.warnings: list[str] = []  # from loading the tools: for the caller to show
        if tools is None:
            from agentcli.agent.toolset.loading import load_tools

            tools = [item.tool for item in load_tools(settings, warn=self.warnings.append)]
        self.settings = settings
        # the session's secrets: redacted from tool output and stored errors (secrets.py)
        self.redactor = session_redactor(settings)
        hide_environment()
        # seals what the review approves, checked by the tools node (approval.py)
        self.approval_key = ApprovalKey.load(data_dir())
        self.store: Store = store
        self.policy = policy
        self.sandbox = sandbox_of(settings)
        self.workspace: Path = (workspace or Path.cwd()).resolve()
        self.explicit_workspace = workspace is not None
        self.tools = {tool.name: tool for tool in tools}
        self._model = model
        self._graph: Any = None
        self._run: Background | None = None
        self.soft_ctrl_c = False  # chat: Ctrl-C stops the run and returns to the prompt
        self.thread_id = new_thread_id()
        self.row: ThreadRow | None = None
        self._end: Any = None  # how the last run left the thread (see _known)
        self._window: int | None = None  # the model's context window; 0: unknown

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
        self.row, self.thread_id, self._end = row, row.thread_id, None
        if not self.explicit_workspace:
            self.workspace = Path(self.row.workspace)
        elif str(self.workspace) != self.row.workspace:
            self.store.update(self.thread_id, workspace=str(self.workspace))
        return self.row

    def model(self) -> BaseChatModel:
        """The chat model, made on first use: a bad model config fails here, before a run."""
        if self._model is None:
            self._model = make_model(self.settings)
        return self._model

    def new_thread(self) -> None:
        """Start over: the next message begins a new thread."""
        self.thread_id, self.row, self._end = new_thread_id(), None, None
        self.store.release()

    def set_model(self, name: str) -> None:
        """Use another model from the next turn on (recorded with the thread)."""
        self.settings = for_model(self.settings, name)  # with its [models."GLOB"] tables
        self._model = None
        self._window = None
        self._graph = None
        if self.row:
            self.store.update(self.thread_id, model=name)

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
        limit = self.settings.max_steps * 3 + 10  # three graph steps per model turn
        return {"configurable": {"thread_id": self.thread_id}, "recursion_limit": limit}

    def context(self) -> RunContext:
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
            system_prompt=s.system_prompt,
            journal=self.store,
            approval_key=self.approval_key,
            sandbox=self.sandbox,
            context_window=self.context_window(),
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
        by a crash will ask when their tasks run again (rerun.py), found without running."""
        known = snapshot or self._known()
        return [*known.interrupts, *cut_off(known, self.store, self.thread_id)]

    def pending(self, snapshot: Any = None) -> ReviewRequest | None:
        """The calls of this thread waiting for a decision, if any."""
        if self.row is None:
            return None
        return review_in(self.thread_id, (item.value for item in self.waiting(snapshot)))

    # -- driving the graph -------------------------------------------------------

    def send(self, text: str) -> Iterator[Event]:
        """A new user message. A thread with calls awaiting review must decide them first."""
        self.model()
        if self.row is None:
            self.store.hold(self.thread_id)
            self.row = self.store.create(
                self.thread_id, title_of(text), str(self.workspace), self.settings.model
            )
        else:
            self.refuse_while_waiting()
        self.row.turns += 1
        with self.store.batch():  # one commit; "running" until the run records how it ended
            self.store.update(self.thread_id, turns=self.row.turns, status=ThreadStatus.RUNNING)
            self.store.add_text(self.thread_id, self.row.turns, "user", text)
        # audit: [] counts as an update of that DeltaChannel, so it snapshots on chat-only
        # turns too and a load never walks back further than SNAPSHOT_EVERY (state.py)
        update = {"messages": [HumanMessage(text)], "invalid_turns": 0, "audit": []}
        return self._drive(update)

    def decide(self, decisions: list[Decision]) -> Iterator[Event]:
        """Answer the pending review (v1 HITL decisions, in the order of its calls)."""
        answer: Any = {"decisions": decisions}
        waiting = self.waiting()
        shown = next(i for i in waiting if review_in(self.thread_id, [i.value]))
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
        self.store.update(self.thread_id, status=ThreadStatus.RUNNING)
        return self._drive(command)

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
                self.tools,
                allowed,
                context=context,
                confined=confined,
            )
        except ValueError as exc:
            return f"answer refused: {exc}"
        return None

    def policy_decisions(self, review: ReviewRequest) -> list[Decision] | None:
        """Decide a pending review by this session's policy, or None if a person must."""
        allowed = allowed_tools(self.approval_key, self.thread_id, self._known().values)
        return policy_decisions(self.policy, review, allowed, self.workspace)

    def resume(self) -> Iterator[Event]:
        """Continue a thread without a new message: retry a failed step."""
        self.refuse_if_nothing_to_continue(self.row is not None and bool(self.state().next))
        self.refuse_while_waiting()  # a cut-off call: running would ask it, or run others
        self.store.update(self.thread_id, status=ThreadStatus.RUNNING)
        return self._drive(None)

    def check_edit(self, name: str, args: Any, original: Any = None) -> str | None:
        """Why the edited `args` cannot run, or review.UNCHANGED if they are `original`'s."""
        tool = self.tools.get(name)
        problem = validate_args(tool, args, list(self.tools), edited=True)
        if problem is None and original is not None and unchanged(tool, original, args):
            return UNCHANGED
        return problem or precondition(tool, args, self._precheck_context())

    def _precheck_context(self) -> ToolContext:
        """What the tools' preconditions read (tools/preconditions.py): no run needed."""
        return ToolContext(
            workspace=self.workspace, allow_private_urls=self.settings.allow_private_urls
        )

    def _drive(self, graph_input: Any) -> Iterator[Event]:
        self.model()
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
                # "checkpoints": the last one's values let the next run skip a walk (recall.py)
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


def settle_stale(store: Store) -> None:
    """Threads the index says are running while no process holds them: their run died (kill
    -9, power loss). Each gets the status its saved state shows, read with a graph that has
    no model and no tools: nothing runs. A call cut off mid-run makes it awaiting_approval."""
    rows = store.recent(status=ThreadStatus.RUNNING)
    if not rows:
        return
    graph = build_graph(_no_model, []).compile(checkpointer=store.saver)
    for row in rows:
        try:
            with store.briefly(row.thread_id):
                snapshot = graph.get_state({"configurable": {"thread_id": row.thread_id}})
                waiting = [*snapshot.interrupts, *cut_off(snapshot, store, row.thread_id)]
                error = None
                if review_in(row.thread_id, (item.value for item in waiting)):
                    status = ThreadStatus.AWAITING_APPROVAL
                elif snapshot.next:
                    status, error = ThreadStatus.ERROR, "interrupted before the run finished"
                else:
                    status = ThreadStatus.IDLE
                store.update(row.thread_id, status=status, last_error=error)
        except ThreadBusy:  # really running
            continue


def _no_model() -> BaseChatModel:
    raise AssertionError("reading a thread's state never asks the model")
