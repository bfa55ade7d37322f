"""Ctrl-C while the chat plays a run: a request to stop the run, not an exception.

A KeyboardInterrupt can land anywhere, in the middle of drawing the screen too. While a
run plays, SIGINT instead asks the session to stop it (Session.stop: the run ends at its
next step, an answer being streamed where it is) and the event loop sees that in good
order. When there is nothing to stop, Ctrl-C is a KeyboardInterrupt as usual.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType


@contextmanager
def stopping(stop: Callable[[], bool] | None) -> Iterator[None]:
    """Within the block, Ctrl-C calls `stop()`; KeyboardInterrupt when that is False."""
    if stop is None or threading.current_thread() is not threading.main_thread():
        yield
        return

    def pressed(signum: int, frame: FrameType | None) -> None:
        if not stop():
            raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, pressed)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
