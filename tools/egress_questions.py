"""The questions a command's egress proxy puts to the person, and what their answers allow.

A confined command's request to a host and port that ``[sandbox] network`` does not list is
a question for the person when a front end answers such questions (the chat): allow it
once (this one connection), allow it for the thread (every later connection of this
thread's commands to that exact host and port: the application keeps the allowance, sealed,
in the thread's state, and gives it back with ``allow_thread`` when a later run of the
thread starts, a resumed chat or `run --thread`), or add it to the config (written by the
application to the person's config file, and allowed from then on in this session too). A
refusal, and a question no one answered before the command ended (it finished, timed out or
was stopped), refuse the connection.

``EgressQuestions`` is the session's desk: it keeps the questions waiting and the hosts
allowed; ``for_thread`` gives the view a run's tools get (``ToolContext.egress_ask``). The
proxy's connection thread calls ``decide``, which blocks until the answer comes (through
``answer``, from the application's session) or the command no longer waits. A view for a
run no one answers for (``asks`` false: `run`) only reports the earlier allowances.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass

ONCE, THREAD, CONFIG, REFUSE = "once", "thread", "config", "refuse"
ANSWERS = (ONCE, THREAD, CONFIG, REFUSE)
POLL_S = 0.1  # how soon a question whose command ended is withdrawn

# what each answer makes of the connection (the audit's and the result's words)
SAID = {
    ONCE: "allowed once by the person",
    THREAD: "allowed for this thread by the person",
    CONFIG: "added to [sandbox] network by the person",
    REFUSE: "refused by the person",
}
EARLIER = {
    THREAD: "allowed by this thread's allowance (the person's answer earlier)",
    CONFIG: SAID[CONFIG],
}
UNANSWERED = "the person did not answer before the command ended"


@dataclass(frozen=True)
class Question:
    """Whether a command may connect to ``host`` (normalised: what the proxy connects to)
    on ``port``; ``how`` is "CONNECT" or "HTTP"; ``call_id`` the shell call it runs in."""

    id: str
    call_id: str
    how: str
    host: str
    port: int


@dataclass(frozen=True)
class Answer:
    """What the person's answer (or an earlier one) makes of one connection; ``asked``: a
    question was put for it (each is audited), not an earlier answer reused."""

    allowed: bool
    why: str
    who: str  # "person", or "agentcli" when no one answered
    asked: bool


class _Waiting:
    def __init__(self, thread_id: str, question: Question) -> None:
        self.thread_id = thread_id
        self.question = question
        self.choice: str | None = None
        self.done = threading.Event()


class EgressQuestions:
    """The questions waiting for the person, and the hosts their answers allowed: for a
    thread (``THREAD``) or for every thread of the session (``CONFIG``)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._waiting: dict[str, _Waiting] = {}
        self._threads: dict[str, set[tuple[str, int]]] = {}
        self._everywhere: set[tuple[str, int]] = set()

    def for_thread(self, thread_id: str, asks: bool = True) -> ThreadQuestions:
        return ThreadQuestions(self, thread_id, asks)

    def allow_thread(self, thread_id: str, targets: Iterable[tuple[str, int]]) -> None:
        """Hosts and ports an earlier answer allowed for this thread (kept with it)."""
        with self._lock:
            self._threads.setdefault(thread_id, set()).update(targets)

    def waiting(self, question_id: str) -> Question | None:
        """The question, while it still waits for its answer."""
        with self._lock:
            found = self._waiting.get(question_id)
        return found.question if found is not None else None

    def answer(self, question_id: str, choice: str) -> bool:
        """Answer a waiting question; False when it no longer waits (its command ended)."""
        if choice not in ANSWERS:
            raise ValueError(f"not an answer: {choice!r}")
        with self._lock:
            waiting = self._waiting.pop(question_id, None)
            if waiting is None:
                return False
            target = (waiting.question.host, waiting.question.port)
            if choice == THREAD:
                self._threads.setdefault(waiting.thread_id, set()).add(target)
            elif choice == CONFIG:
                self._everywhere.add(target)
            waiting.choice = choice
        waiting.done.set()
        return True

    def earlier(self, thread_id: str, host: str, port: int) -> Answer | None:
        """The allowance an earlier answer gave this host and port in this thread, if any."""
        with self._lock:
            if (host, port) in self._everywhere:
                return Answer(True, EARLIER[CONFIG], "person", False)
            if (host, port) in self._threads.get(thread_id, set()):
                return Answer(True, EARLIER[THREAD], "person", False)
        return None

    def ask(
        self,
        thread_id: str,
        question: Question,
        tell: Callable[[Question], None],
        gone: Callable[[], bool],
    ) -> Answer:
        """Put ``question`` (told through ``tell``) and wait for its answer, as long as
        ``gone()`` is false (the command still waits): then it is withdrawn, a refusal."""
        waiting = _Waiting(thread_id, question)
        with self._lock:
            self._waiting[question.id] = waiting
        try:
            tell(question)
            while not waiting.done.wait(POLL_S):
                if gone():
                    break
        finally:
            with self._lock:
                self._waiting.pop(question.id, None)
        choice = waiting.choice
        if choice is None:
            return Answer(False, UNANSWERED, "agentcli", True)
        return Answer(choice != REFUSE, SAID[choice], "person", True)

    def next_id(self) -> str:
        return f"egress-{next(self._ids)}"


@dataclass(frozen=True)
class ThreadQuestions:
    """The desk as one thread's run sees it: what ToolContext.egress_ask holds."""

    desk: EgressQuestions
    thread_id: str
    asks: bool = True  # false: no one answers (`run`), only earlier allowances count

    def decide(
        self,
        call_id: str,
        how: str,
        host: str,
        port: int,
        tell: Callable[[Question], None],
        gone: Callable[[], bool],
    ) -> Answer | None:
        """An earlier answer's allowance for ``host`` and ``port``, else the person's answer
        to a new question (blocks until it comes or ``gone()``); None: no one is asked."""
        if earlier := self.desk.earlier(self.thread_id, host, port):
            return earlier
        if not self.asks:
            return None
        question = Question(self.desk.next_id(), call_id, how, host, port)
        return self.desk.ask(self.thread_id, question, tell, gone)
