"""One ACP session: a thread, driven as the chat drives it, with the editor as its screen.

The thread's session (session/thread_session.py) is synchronous and runs on a worker thread
of its own; the events it yields become session/update notifications, and each review
becomes permission requests, one call at a time, as at a terminal. A review the editor does
not answer (it cancels the request, the turn is cancelled, the connection closes, or it
answers with a choice that was not offered) decides nothing: the calls wait, as after `q`,
for `agentcli review`, `resume`, or this session's next prompt.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any, TypeVar

from acp.schema import AllowedOutcome

from agentcli.acp import tool_calls
from agentcli.acp.outbox import Outbox
from agentcli.acp.permission_options import Choices, question
from agentcli.acp.plan_progress import PlanProgress
from agentcli.decisions import Decision
from agentcli.errors import AgentcliError, Interrupted
from agentcli.events import (
    AnswerCutOff,
    AssistantMessage,
    Compacted,
    Done,
    Event,
    HookNote,
    Retry,
    ReviewRequest,
    RunStatus,
    TextDelta,
    ToolOutput,
    ToolResult,
)
from agentcli.session.thread_session import ThreadSession

T = TypeVar("T")
LEFT_WAITING = (
    "The calls above are waiting for review (nothing was decided); the next message asks"
    " about them again, or decide them with `agentcli review {thread}`."
)
OUTPUT_KEPT = 256_000  # characters of a command's live output kept to show


class EditorSession:
    """A thread driven for an editor: prompts in, updates and permission requests out."""

    def __init__(
        self, session_id: str, thread: ThreadSession, client: Any, choices: Choices, mode: str
    ) -> None:
        self.session_id = session_id
        self.thread = thread
        self.client = client
        self.choices = choices
        self.mode = mode
        thread.soft_ctrl_c = True  # session/cancel stops a run at its next step, as Ctrl-C
        redactor = getattr(thread, "redactor", None)
        self.outbox = Outbox(client, session_id, redactor)
        self.worker = ThreadPoolExecutor(1, thread_name_prefix="agentcli-acp")
        self._cancel = asyncio.Event()
        self._known: set[str] = set()  # the call ids the editor has been told of
        self._output: dict[str, str] = {}
        self._streamed = False  # the current answer came as text pieces
        self._left_waiting = False  # the last review was left undecided
        self.busy = False  # a prompt is under way (the protocol allows one at a time)
        self.plan = PlanProgress()

    async def call(self, fn: Callable[..., T], *args: Any) -> T:
        """`fn(*args)` on this session's worker thread (the thread's session is blocking)."""
        return await asyncio.get_running_loop().run_in_executor(self.worker, partial(fn, *args))

    # -- a prompt ------------------------------------------------------------------

    async def prompt(self, text: str) -> str:
        """Play a message; the turn's stop reason. Calls the thread was left waiting on are
        asked about first, as the chat does; left waiting again, the message is not sent."""
        self._cancel = asyncio.Event()
        self.busy = True
        try:
            review = await self.call(self.thread.pending)
            if review is not None:
                stop = await self._play(None, review)
                if self._left_waiting:
                    await self.outbox.note("(your message was not sent)")
                    return stop
            events = await self.call(self.thread.send, text, self.mode == "plan")
            return await self._play(events)
        except Interrupted:  # session/cancel: the run stopped at its step
            return "cancelled"
        except AgentcliError as exc:  # one line, as a terminal shows it, redacted
            if self._cancel.is_set():
                return "cancelled"
            await self.outbox.note(f"agentcli: error: {exc}")
            return "end_turn"
        except Exception as exc:  # a bug: said here, redacted (the SDK would send it raw)
            await self.outbox.note(f"agentcli: unexpected {type(exc).__name__}: {exc}")
            return "end_turn"
        finally:
            self.busy = False
            await self.outbox.end_text()

    def cancel(self) -> None:
        """session/cancel: stop the run under way; an open permission request decides
        nothing (its calls wait)."""
        self._cancel.set()
        self.thread.stop()

    async def _play(
        self, events: Iterable[Event] | None, review: ReviewRequest | None = None
    ) -> str:
        """The run's events as updates, each review asked and the run continued; the stop
        reason (`_left_waiting` says whether a review was left undecided)."""
        self._left_waiting = False
        while True:
            done: Done | None = None
            async for event in self._each(events or ()):
                if isinstance(event, ReviewRequest):
                    review = event
                elif isinstance(event, Done):
                    done = event
                else:
                    await self._show(event)
            await self.outbox.end_text()
            if review is None:
                incomplete = done is not None and done.status == RunStatus.INCOMPLETE
                return "max_tokens" if incomplete else "end_turn"
            decisions = await self._decisions(review)
            if decisions is None:
                self._left_waiting = True
                await self.outbox.note(LEFT_WAITING.format(thread=self.thread.thread_id))
                return "cancelled" if self._cancel.is_set() else "end_turn"
            events, review = await self.call(self.thread.decide, decisions), None

    async def _each(self, events: Iterable[Event]) -> AsyncIterator[Event]:
        iterator = iter(events)
        end = object()
        while (event := await self.call(next, iterator, end)) is not end:
            yield event  # type: ignore[misc]

    # -- what the editor is shown ----------------------------------------------------

    async def _show(self, event: Event) -> None:
        out = self.outbox
        if isinstance(event, TextDelta):
            self._streamed = True
            await out.text(event.text)
        elif isinstance(event, AssistantMessage):
            if not self._streamed and event.text:
                await out.text(event.text)
            self._streamed = False
            await out.end_text()
            for call in event.tool_calls:
                await self._tell(call)
        elif isinstance(event, ToolOutput):
            shown = (self._output.get(event.call_id, "") + event.text)[-OUTPUT_KEPT:]
            self._output[event.call_id] = shown
            await out.send(tool_calls.output(event.call_id, shown))
        elif isinstance(event, ToolResult):
            self._output.pop(event.call_id, None)
            await self._tell({"id": event.call_id, "name": event.name, "args": {}})
            await out.send(
                tool_calls.finished(event.call_id, event.content, event.status == "error")
            )
            if (progress := self.plan.result(event.call_id)) is not None:
                await out.send(progress)
        elif isinstance(event, HookNote):
            await out.note(f"hook: {event.text}")
        elif isinstance(event, Retry):
            await out.note(
                f"model request failed ({event.error}); try {event.attempt} of {event.attempts}"
            )
        elif isinstance(event, Compacted):
            await out.note(f"older messages summarised to fit the context window ({event.reason})")
        elif isinstance(event, AnswerCutOff):
            await out.note(f"the answer was cut off: {event.reason}")

    async def _tell(self, call: dict[str, Any]) -> None:
        """Start a call in the editor, once."""
        call_id = str(call.get("id"))
        if call_id not in self._known:
            self._known.add(call_id)
            await self.outbox.send(tool_calls.started(call, self.thread.workspace))

    # -- the review ------------------------------------------------------------------

    async def _decisions(self, review: ReviewRequest) -> list[Decision] | None:
        """One decision per call, in order, or None: the review is left waiting."""
        if review.plan is not None:  # shown whoever decides it
            await self.outbox.send(self.plan.start(review.plan))
        decided = await self.call(self.thread.policy_decisions, review)
        if decided is not None:
            return decided
        workspace = self.thread.workspace
        decisions: list[Decision] = []
        allowed: list[tuple[str, str | None]] = []  # allowed always in this review
        for request in review.action_requests:
            await self._tell(request)
            decision = self.choices.already(request, allowed, workspace)
            if decision is None:
                asked = question(request, workspace)
                decision = self.choices.decision(asked, await self._ask(asked))
                if decision is None:
                    return None
                if decision.get("always"):
                    allowed.append((str(request["name"]), asked.match))
            decisions.append(decision)
        for request, decision in zip(review.action_requests, decisions, strict=True):
            if decision["type"] == "approve":
                await self.outbox.send(tool_calls.running(str(request["id"])))
        return decisions

    async def _ask(self, asked: Any) -> str | None:
        """The option the editor chose, or None (cancelled, failed, the turn cancelled)."""
        out = self.outbox
        request = out.clean(tool_calls.asked(asked.request, self.thread.workspace))
        options = [out.clean(option) for option in asked.options]
        asking = asyncio.ensure_future(
            self.client.request_permission(
                session_id=self.session_id, tool_call=request, options=options
            )
        )
        stopping = asyncio.ensure_future(self._cancel.wait())
        try:
            await asyncio.wait({asking, stopping}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopping.cancel()
        if not asking.done():
            asking.cancel()
            return None
        try:
            outcome = asking.result().outcome
        except Exception:  # the connection closed, an error answer, a malformed answer
            return None
        return outcome.option_id if isinstance(outcome, AllowedOutcome) else None

    async def close(self) -> None:
        """The editor is gone: stop a run under way, let it end its step, let go of the
        thread."""
        self.thread.stop()
        await self.call(self.thread.wait_stopped)
        self.worker.shutdown(wait=False)
