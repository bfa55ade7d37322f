"""A stop signal (SIGTERM, SIGHUP) ends agentcli even when its unwinding hangs."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from agentcli import cli
from tests.helpers.waiting import WAIT_S


def test_a_stop_signal_ends_the_process_though_its_unwinding_never_ends(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # a chat whose terminal closed was seen waiting forever for prompt_toolkit's cancelled
    # tasks, every stop signal ignored: here the unwinding "never ends", as nothing else
    # ends the process
    ended: list[int] = []
    done = threading.Event()

    def end_now(code: int) -> None:  # os._exit, held by the deadline
        ended.append(code)
        done.set()

    monkeypatch.setattr(cli, "STOP_GRACE_S", 0.05)
    monkeypatch.setattr(os, "_exit", end_now)
    dispositions = {signum: signal.getsignal(signum) for signum in cli.STOP_SIGNALS}
    try:
        with pytest.raises(SystemExit) as stopping:
            cli._on_stop_signal(signal.SIGTERM, None)
        assert stopping.value.code == 128 + signal.SIGTERM
        assert all(signal.getsignal(s) == signal.SIG_IGN for s in cli.STOP_SIGNALS)
        assert done.wait(WAIT_S) and ended == [128 + signal.SIGTERM]
    finally:
        for signum, disposition in dispositions.items():
            signal.signal(signum, disposition)
