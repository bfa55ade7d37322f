"""The chat's session, made in the background (cli/early_prompt.py `Starting`): a Ctrl-C that
stops the main thread anywhere while it starts that work never loses it. A chat once waited
for ever at "starting" after a Ctrl-C that came between the work being taken and its thread
being started (tests/e2e/test_chat_start.py, under load)."""

from __future__ import annotations

import threading

import pytest

from agentcli.cli.early_prompt import Starting
from tests.helpers.waiting import ends


def starting(runs: list[str]) -> Starting:
    made = Starting("thread", None, "/work", awaiting=False)

    def work() -> None:
        runs.append(threading.current_thread().name)
        made.future.set_result("the session")  # type: ignore[arg-type]

    made.work = work
    return made


@pytest.mark.parametrize("when", ["before the thread starts", "once it has started"])
def test_a_ctrl_c_while_the_work_is_started_does_not_lose_it(
    monkeypatch: pytest.MonkeyPatch, when: str
) -> None:
    runs: list[str] = []
    made = starting(runs)
    real_start = threading.Thread.start
    stopped: list[bool] = []

    def interrupted_start(thread: threading.Thread) -> None:
        if not stopped:  # the first start only: the person pressed Ctrl-C just then
            stopped.append(True)
            if when == "once it has started":
                real_start(thread)
            raise KeyboardInterrupt
        real_start(thread)

    monkeypatch.setattr(threading.Thread, "start", interrupted_start)
    with pytest.raises(KeyboardInterrupt):
        made.session()
    # the next message waits for the session again: it comes, made once
    assert ends(made.session, what="the session after a Ctrl-C") == "the session"
    made.settle()
    assert runs == ["agentcli-prepare"]


def test_a_chat_left_before_the_work_began_never_begins_it() -> None:
    runs: list[str] = []
    made = starting(runs)
    made.settle()
    made.begin()  # a thread started late (a Ctrl-C stopped the first) finds nothing to do
    started = [t for t in threading.enumerate() if t.name == "agentcli-prepare"]
    for thread in started:
        thread.join(timeout=60)
    assert runs == [] and not made.future.done()


def test_leaving_waits_for_the_work_that_began(monkeypatch: pytest.MonkeyPatch) -> None:
    runs: list[str] = []
    made = starting(runs)
    release = threading.Event()
    began = threading.Event()
    work = made.work
    assert work is not None

    def slow() -> None:
        began.set()
        release.wait(60)
        work()

    made.work = slow
    made.begin()
    assert began.wait(60)
    warned: list[str] = []

    def warn(message: str) -> None:  # said once the quiet wait is over: the work ends then
        warned.append(message)
        release.set()

    monkeypatch.setattr("agentcli.cli.early_prompt.warn", warn)
    monkeypatch.setattr("agentcli.cli.early_prompt.SETTLE_QUIETLY_S", 0.01)
    made.settle()  # returns only once the work is over
    assert runs == ["agentcli-prepare"]
    assert warned == ["finishing agentcli's start-up before leaving (Ctrl-C leaves at once)"]
