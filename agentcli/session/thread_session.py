"""ThreadSession: one thread driven by chat, run or review, wherever it lives.

`local.Session` runs the graph in this process; `remote.RemoteSession` drives it on a
LangGraph server. Callers hold a ThreadSession and never ask which one it is: what only a
local session can do is reached through `local()`, which a remote one refuses in one line.
What both do alike is written here once: the refusal while calls await review, the check
before resuming, and how a run's end becomes events (`run_ended`).
"""

from __future__ import annotations

import shlex
from abc import ABC, abstractmethod
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agentcli_tools.plurals import counted

from agentcli.config import Settings
from agentcli.decisions import Decision
from agentcli.errors import RunStopped, UsageError
from agentcli.events import Done, Event, ReviewRequest, RunStatus
from agentcli.thread_rows import ThreadIndex, ThreadRow


class ThreadSession(ABC):
    settings: Settings
    store: ThreadIndex  # in the database, or on the server
    thread_id: str
    row: ThreadRow | None  # None until the thread's first message
    workspace: Path | None  # the files reviews preview; None when they are on a server
    explicit_workspace: bool  # --workspace was given: the thread's recorded one is not used
    warnings: list[str]  # from loading the tools, for the caller to show
    soft_ctrl_c: bool  # chat: Ctrl-C stops the run and returns to the prompt
    # chat: a confined command's request to a host not listed is a question (EgressQuestion)
    asks_egress: bool = False
    server_url: str | None = None  # where the thread lives, if not here
    expired: ReviewRequest | None = None  # calls `open` denied: their review expired

    @property
    def hint_flags(self) -> str:
        """What a command continuing this thread needs besides its id, so that a hint
        printed for it works when pasted: ` --server URL` for a thread on a server (a local
        session adds ` --base-url URL` when a flag chose its server, thread_origin.py)."""
        return f" --server {shlex.quote(self.server_url)}" if self.server_url else ""

    @property
    @abstractmethod
    def location(self) -> str:
        """Where the thread's files are, as the chat's header shows it."""

    def local(self, what: str) -> Any:
        """This session, for `what` only a local session does (its database, its model)."""
        raise UsageError(f"{what} is not available with --server")

    # -- threads ---------------------------------------------------------------

    @abstractmethod
    def open(self, id_or_prefix: str) -> ThreadRow:
        """Attach to an existing thread (a unique prefix of its id is enough)."""

    @abstractmethod
    def open_latest(self) -> ThreadRow:
        """Attach to the most recently updated thread of this workspace."""

    @abstractmethod
    def new_thread(self) -> None:
        """Start over: the next message begins a new thread."""

    @abstractmethod
    def prepare_reading(self) -> None:
        """Make ahead what reading the thread and showing its review needs (prepare makes
        the rest)."""

    @abstractmethod
    def prepare(self) -> None:
        """Make ahead what the first message needs (the chat does it while the person types)."""

    @abstractmethod
    def values(self) -> dict[str, Any]:
        """The thread's latest state values: messages, audit, allowed tools."""

    @abstractmethod
    def pending(self) -> ReviewRequest | None:
        """The calls of this thread waiting for a decision, if any."""

    # -- driving the graph -------------------------------------------------------

    @abstractmethod
    def send(self, text: str, plan: bool = False) -> Iterator[Event]:
        """A new user message (`plan`: the model plans every step, agent/plan/). A thread
        with calls awaiting review must decide them first."""

    @abstractmethod
    def decide(self, decisions: list[Decision]) -> Iterator[Event]:
        """Answer the pending review (one decision per call, in order) and continue."""

    @abstractmethod
    def resume(self) -> Iterator[Event]:
        """Continue the thread without a new message: retry a step that failed."""

    @abstractmethod
    def set_mode(self, mode: str) -> None:
        """The approval mode from the next run on (/mode): policy/approval_modes.py."""

    @abstractmethod
    def policy_decisions(self, review: ReviewRequest) -> list[Decision] | None:
        """Decide a pending review by this session's policy, or None if a person must."""

    @abstractmethod
    def check_edit(self, name: str, args: Any, original: Any = None) -> str | None:
        """Why edited `args` cannot run, or review.UNCHANGED if they are `original`'s."""

    def egress_waiting(self, question_id: str) -> bool:
        """Whether an egress question (EgressQuestion) still waits for its answer."""
        return False  # none is asked here (a server refuses hosts not listed)

    def answer_egress(self, question_id: str, choice: str) -> bool:
        """Answer an egress question: "once", "thread", "config" (the host is written to
        the config file's [sandbox] network first: ConfigError if it cannot be) or
        "refuse". False when it no longer waits (its command ended: refused)."""
        return False

    def stop(self) -> bool:
        """Ctrl-C in the chat: ask the run under way to stop. False: nothing to stop here."""
        return False

    def stopping(self) -> bool:
        """Whether a run stopped with Ctrl-C is still ending here (its call being stopped,
        its result saved): leaving now would leave that call cut off."""
        return False

    def wait_stopped(self) -> None:
        """Until the stopped run has ended; Interrupted if asked to hurry (Ctrl-C again)."""
        return None  # no run of its own ends here (a server ends the runs it cancels)

    # -- shared by both ------------------------------------------------------------

    def refuse_while_waiting(self, pending: ReviewRequest | None = None) -> None:
        """A thread whose calls await review takes no new message and no resume."""
        if pending := pending or self.pending():
            raise UsageError(
                f"thread {self.thread_id} has {counted(len(pending.action_requests), 'call')}"
                " awaiting review: decide them first"
                f" (agentcli review {self.thread_id}{self.hint_flags})"
            )

    def refuse_if_nothing_to_continue(self, has_next: bool) -> None:
        if self.row is None or not has_next:
            raise UsageError(f"thread {self.thread_id} has nothing to continue: give it a message")


def run_ended(
    thread_id: str,
    review: ReviewRequest | None,
    stopped: str | None,
    final: str,
    usage: dict[str, Any],
    cut_off: object,
) -> Iterator[Event]:
    """The events a run's end gives, wherever it ran: a review and `awaiting_approval`, a
    limit (raised as RunStopped), or `done` (`incomplete` when the server cut the answer
    off)."""
    if review is not None:
        yield review
        pending = review.action_requests
        yield Done(thread_id, RunStatus.AWAITING_APPROVAL, final, usage, pending)
        return
    if stopped:
        raise RunStopped(stopped)
    status = RunStatus.INCOMPLETE if cut_off else RunStatus.DONE
    yield Done(thread_id, status, final, usage)
