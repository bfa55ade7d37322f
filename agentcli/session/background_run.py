"""A graph run iterated in a daemon thread, so Ctrl-C reaches the person at once."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterator
from typing import Any

from agentcli.errors import Interrupted

POLL_S = 0.05  # how soon a stop asked from a signal handler is seen


class Background:
    """Iterates a graph run in a daemon thread, so Ctrl-C reaches the caller at once.

    LangGraph runs nodes in worker threads and, when interrupted, waits for them: a
    model request in flight would hold Ctrl-C for its whole timeout. With a `cancel`
    event (chat), Ctrl-C sets it (a KeyboardInterrupt here, or `stop()` from a signal
    handler) and Interrupted is raised at once: the run stops at its next step (a running
    shell command is stopped, the model is not called again, an answer being streamed
    ends where it is) while the person is back at the prompt. Without one (scripts),
    Ctrl-C propagates.
    """

    def __init__(self, iterator: Iterator[Any], cancel: threading.Event | None) -> None:
        self.cancel = cancel
        self.hurry = threading.Event()  # a second Ctrl-C: wait no longer for the run
        self.consumed = False  # every item has been read
        self.items: queue.Queue[tuple[bool, Any]] = queue.Queue()

        def pump() -> None:
            try:
                for item in iterator:
                    self.items.put((False, item))
                self.items.put((True, None))
            except BaseException as exc:  # handed to the consumer, raised there
                self.items.put((True, exc))

        self.thread = threading.Thread(target=pump, name="agentcli-run", daemon=True)
        self.thread.start()

    def stop(self) -> bool:
        """Ask the run to stop (Ctrl-C from a signal handler); a second call hurries the
        wait in `rest()`. False when the run cannot be stopped so, or is over."""
        if self.cancel is None or self.consumed:
            return False
        if self.cancel.is_set():
            self.hurry.set()
        self.cancel.set()
        return True

    def __iter__(self) -> Iterator[Any]:
        while True:
            if self.cancel is not None and self.cancel.is_set():
                raise Interrupted(
                    "interrupted: the run stops at its next step (/retry continues it)"
                )
            try:
                finished, item = self._next(None if self.cancel is None else POLL_S)
            except KeyboardInterrupt:
                if self.cancel is None:
                    raise
                self.cancel.set()
                continue
            if finished:
                self.consumed = True
                if item is not None:
                    raise item
                return
            if item is not None:
                yield item

    def rest(self, grace: float) -> Iterator[Any]:
        """After a stop: the items still to come, for up to `grace` seconds (or until a
        second stop); `consumed` tells whether the run got to its end."""
        deadline = time.monotonic() + grace
        while not self.consumed and not self.hurry.is_set():
            left = deadline - time.monotonic()
            if left <= 0:
                return
            finished, item = self._next(min(left, POLL_S))
            if finished:
                self.consumed = True
                if item is not None:
                    raise item
                return
            if item is not None:
                yield item

    def _next(self, timeout: float | None) -> tuple[bool, Any]:
        """The next (finished, item); (False, None) when none came within `timeout`.
        Items are never None: a stream part is a tuple."""
        try:
            return self.items.get(timeout=timeout)
        except queue.Empty:
            return False, None

    def wait(self) -> None:
        """Until an interrupted run has stopped: only one run drives a thread at a time.
        A stop asked meanwhile (`stop()`, Ctrl-C in the chat) ends the wait."""
        self.hurry.clear()
        while self.thread.is_alive():
            self.thread.join(POLL_S)
            if self.hurry.is_set():
                raise Interrupted("interrupted while the last run was stopping: nothing sent")
