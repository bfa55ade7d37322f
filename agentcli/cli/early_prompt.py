"""A chat that can be typed into before LangChain has loaded.

LangChain, LangGraph and the OpenAI client are slow to import. `agentcli chat`
does not wait for them: the thread is found (or its id chosen) with the thread index
alone, the prompt comes up, and the session (the libraries, the tools, the compiled graph)
is made in a daemon thread while the person types. The first message waits for it only as
long as it must. As soon as the graph is compiled the thread can be read (a resumed
thread's recap and pending review show); the model client (the OpenAI SDK, the slowest
import) is made next, in the same thread, once the chat waits for the person (its prompt,
or a pending review's first panel, is drawn), while the person reads. bench/startup.py
measures these moments.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from agentcli.cli import gc_tuning
from agentcli.cli.common_options import Common, warn
from agentcli.cli.session_opening import (
    attach,
    check_early,
    checked_with_thread,
    one_of,
    open_session,
)
from agentcli.session.thread_origin import for_thread, hint_flags
from agentcli.thread_rows import ThreadStatus, new_thread_id

if TYPE_CHECKING:
    from agentcli.session.thread_session import ThreadSession


SETTLE_QUIETLY_S = 1.0  # leaving waits this long for the start-up thread before saying so


@dataclass
class Starting:
    """What the chat shows at once, and the session being made for it."""

    thread_id: str
    title: str | None  # None: a new thread
    where: str
    awaiting: bool  # the index says calls wait for review: show them before the prompt
    mode: str = "ask"  # the approval mode the chat starts in (--mode, [approval] mode)
    future: Future[ThreadSession] = field(default_factory=Future)
    work: Callable[[], None] | None = None  # makes the session; begin() runs it once
    hint_flags: str = ""  # what the resume hint needs besides the id (thread_origin.py)
    preview: str | None = None  # the parked review as the index keeps it (early_review.py)
    # set once the chat waits for the person (its prompt, or a pending review's panel is
    # drawn): the model client is made after it, not while the recap and the panel are
    # drawn (Python runs one thread at a time: the two would share the CPU)
    waiting: threading.Event = field(default_factory=threading.Event)
    leaving: threading.Event = field(default_factory=threading.Event)  # settle() was called
    thread: threading.Thread | None = None  # the one that runs `work`, once it has begun
    claim: threading.Lock = field(default_factory=threading.Lock)

    def begin(self) -> None:
        """Start making the session, in a daemon thread (the chat calls this once its
        prompt is drawn, so the two do not share the start-up's CPU). Ctrl-C can stop the
        main thread anywhere in here; so `work` is taken by the thread that runs it, never
        by the caller, and a call after one that was stopped starts it again (a thread
        started twice finds it taken, and ends)."""
        if self.thread is None and self.work is not None:
            threading.Thread(target=self._run, name="agentcli-prepare", daemon=True).start()

    def _run(self) -> None:
        with self.claim:
            work, self.work = self.work, None
            if work is None or self.leaving.is_set():
                return
            self.thread = threading.current_thread()
        work()

    def settle(self) -> None:
        """Let the session being made finish before the chat leaves (and make no model
        client for it): the interpreter's exit stops a daemon thread where it stands, and
        one stopped inside a library's native code (pydantic-core runs the model client's
        validators) aborts the process ("FATAL: exception not rethrown", SIGABRT)."""
        self.leaving.set()
        self.waiting.set()
        with self.claim:  # from here on no thread takes the work: the one that has is known
            thread = self.thread
        if thread is None:
            return
        thread.join(timeout=SETTLE_QUIETLY_S)
        if thread.is_alive():  # a database or server that is slow to answer, say
            warn("finishing agentcli's start-up before leaving (Ctrl-C leaves at once)")
            thread.join()

    def session(self) -> ThreadSession:
        """The session; waits for it, and raises what stopped it being made."""
        self.begin()
        return self.future.result()

    def on_failure(self, callback: Callable[[BaseException], None]) -> None:
        def check(future: Future[ThreadSession]) -> None:
            if (error := future.exception()) is not None:
                callback(error)

        self.future.add_done_callback(check)


def start(
    common: Common,
    thread: str | None,
    last: bool,
    auto_approve: bool,
    approve: list[str] | None,
    deny: list[str] | None,
) -> Starting:
    """Find the thread now (a bad id or a busy thread fails at once); the session is made
    in the background once `begin()` is called. A session on a server is made here: it
    loads no LangChain."""
    settings = common.settings()
    if not checked_with_thread(common, settings, bool(thread or last)):
        check_early(common, settings, approve, deny)
    if common.server:
        session = open_session(common, auto_approve, approve, deny)
        attach(session, thread, last)
        ready = Starting(session.thread_id, None, "", awaiting=True, mode=settings.approval_mode)
        ready.future.set_result(session)
        return ready
    one_of(thread, last)
    workspace = (common.checked_workspace() or Path.cwd()).resolve()
    store = common.store(settings)
    row = store.resolve(thread) if thread else store.latest(str(workspace)) if last else None
    if row is not None and checked_with_thread(common, settings, True):
        check_early(common, for_thread(settings, row), approve, deny)  # the thread's server
        store.hold(row.thread_id)  # one session per thread: ThreadBusy now, not later
    where = row.workspace if row is not None and common.workspace is None else str(workspace)
    if row is not None and common.workspace is None:
        from agentcli.cli.continuing import warn_if_gone

        warn_if_gone(where, row.thread_id)
    awaiting = row is not None and row.status != ThreadStatus.IDLE
    decided = auto_approve or approve or deny  # the policy answers: no panel to draw early
    starting = Starting(
        row.thread_id if row else new_thread_id(),
        row.title if row else None,
        where,
        awaiting=awaiting,
        mode=settings.approval_mode,
        hint_flags=hint_flags(settings),
        preview=store.preview(row.thread_id)
        if row is not None and awaiting and not decided
        else None,
    )

    def prepare() -> None:
        try:
            session = open_session(common, auto_approve, approve, deny, store=store, quiet=True)
            if row is not None:
                session.open(row.thread_id)
            else:
                session.thread_id = starting.thread_id
            session.prepare_reading()
        except BaseException as exc:
            starting.future.set_exception(exc)
            return
        starting.future.set_result(session)  # the recap and a pending review can show now
        # then the model client, while the person reads or types: a failure here is raised
        # again where the chat first needs the model, as an error of that message (a
        # message sent before makes it itself: the model is made once, under a lock)
        starting.waiting.wait()
        if starting.leaving.is_set():
            return
        with suppress(Exception):
            session.prepare()
        gc_tuning.ready()

    if not starting.awaiting:  # nothing to draw before the prompt but the prompt
        starting.waiting.set()
    starting.work = prepare
    return starting


def show_warnings(session: ThreadSession) -> None:
    for message in getattr(session, "warnings", []):
        warn(message)


def fixed_part_line(session: ThreadSession) -> tuple[str, str] | None:
    """The fixed part of each request against the model's window, as one line, and how
    much it needs saying: "" (it fits), "warning" (tools left out) or "error" (not even the
    minimum fits: the first request is refused with this line). None: the window is
    unknown, or the session is on a server (whose own window this process does not know)."""
    fixed_part = getattr(session, "fixed_part", None)
    try:
        offer = fixed_part() if fixed_part is not None else None
    except Exception:  # the model server is unreachable or misconfigured: said elsewhere
        return None
    if offer is None:
        return None
    if not offer.fits:
        return offer.too_small(), "error"
    summary = offer.summary(len(offer.schemas) + len(offer.left_out))
    return summary, "warning" if offer.left_out else ""
