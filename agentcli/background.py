"""A graph run iterated in a daemon thread, so Ctrl-C reaches the person at once."""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from typing import Any

from agentcli.errors import Interrupted


class Background:
    """Iterates a graph run in a daemon thread, so Ctrl-C reaches the caller at once.

    LangGraph runs nodes in worker threads and, when interrupted, waits for them: a
    model request in flight would hold Ctrl-C for its whole timeout. With a `cancel`
    event (chat), Ctrl-C sets it and raises Interrupted at once: the run stops at its
    next step (a running shell command is stopped, the model is not called again) while
    the person is back at the prompt. Without one (scripts), Ctrl-C propagates.
    """

    def __init__(self, iterator: Iterator[Any], cancel: threading.Event | None) -> None:
        self.cancel = cancel
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

    def __iter__(self) -> Iterator[Any]:
        while True:
            try:
                finished, item = self.items.get()
            except KeyboardInterrupt:
                if self.cancel is None:
                    raise
                self.cancel.set()
                raise Interrupted(
                    "interrupted: the run stops at its next step (/retry continues it)"
                ) from None
            if finished:
                if item is not None:
                    raise item
                return
            yield item

    def wait(self) -> None:
        """Until an interrupted run has stopped: only one run drives a thread at a time."""
        self.thread.join()
