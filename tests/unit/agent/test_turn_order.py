"""The calls of one turn run in the model's order wherever it matters (agent/turn_order.py):
a call that may change files after every call before it, a read after the last change."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.tools import tool
from langgraph.errors import GraphInterrupt

from agentcli.agent import turn_order
from agentcli.agent.turn_order import (
    AFTER_NOT_RUN,
    LATER,
    NOT_STARTED,
    STOPPED,
    UNKNOWN,
    forget_turn,
    in_order,
    turn_of,
    waits,
)
from agentcli.config import Settings
from agentcli.errors import Interrupted
from agentcli.events import Done
from agentcli.policy.approval_policy import Policy
from agentcli.session.local import Session
from agentcli.threads.backends import open_store
from tests.helpers.fakes import FakeChatModel, call, say
from tests.helpers.waiting import until

ORDER: list[str] = []
SLOW_STARTED = threading.Event()
SLOW_MAY_END = threading.Event()  # cleared by a test that stops a run while `slow` runs
SLOW_MAY_END.set()


@tool
def slow(label: str) -> str:
    """Take a while, then note the label.

    Args:
        label: what to note
    """
    SLOW_STARTED.set()
    time.sleep(0.2)  # the subject: a change that ends after the fast call would have
    until(SLOW_MAY_END.is_set, what="the test let the slow call end")
    ORDER.append(label)
    return label


@tool
def fast(label: str) -> str:
    """Note the label at once.

    Args:
        label: what to note
    """
    ORDER.append(label)
    return label


@tool("read_file")
def reader(path: str) -> str:
    """Note a read (named as the built-in reader: reads of a turn run side by side).

    Args:
        path: what to read
    """
    ORDER.append(f"read {path}")
    return path


def session(tmp_path: Path, policy: Policy, *replies: Any) -> Session:
    # without undo's snapshots, which also make changes take turns (but in any order)
    settings = Settings(db=str(tmp_path / "db.sqlite"), undo_snapshots=False)
    model = FakeChatModel(replies=list(replies), calls=[])
    return Session(
        settings, open_store(settings), policy, workspace=tmp_path, model=model,
        tools=[slow, fast, reader],
    )  # fmt: skip


def c(name: str, call_id: str) -> dict[str, Any]:
    return {"name": name, "args": {}, "id": call_id, "type": "tool_call"}


def test_what_each_call_of_a_turn_waits_for() -> None:
    turn = [
        c("read_file", "r1"),
        c("write_file", "w1"),
        c("read_file", "r2"),
        c("list_dir", "r3"),
        c("shell", "s1"),
        c("read_file", "r4"),
        c("some_mcp_tool", "m1"),
    ]
    assert waits(turn) == [[], ["r1"], ["w1"], ["w1"], ["w1", "r2", "r3"], ["s1"], ["s1", "r4"]]
    assert waits([c("read_file", "a"), c("fetch_url", "b")]) == [[], []]
    assert waits([c("shell", "same"), c("shell", "same")]) == [[], []]  # never waits for itself


def test_calls_go_in_the_order_of_the_model_s_turn_whoever_approved_them() -> None:
    turn = [c("shell", "1"), c("write_file", "2"), c("shell", "3")]
    approved = [turn[1], {**turn[0], "args": {"command": "edited"}}, turn[2]]  # policy first
    assert [x["id"] for x in in_order(approved, turn)] == ["1", "2", "3"]


def test_a_slow_change_runs_before_the_fast_one_the_model_put_after_it(tmp_path: Path) -> None:
    ORDER.clear()
    replies = []
    for n in range(3):
        replies += [call(("slow", {"label": f"{n}a"}), ("fast", {"label": f"{n}b"})), say("ok")]
    s = session(tmp_path, Policy.build(auto_approve=True), *replies)
    for n in range(3):
        events = list(s.send(f"turn {n}"))
        assert isinstance(events[-1], Done), events
    assert ORDER == ["0a", "0b", "1a", "1b", "2a", "2b"]


def test_reads_wait_for_the_change_before_them_and_changes_for_the_reads(tmp_path: Path) -> None:
    ORDER.clear()
    turn = call(
        ("read_file", {"path": "before"}),
        ("slow", {"label": "change"}),
        ("read_file", {"path": "after"}),
        ("fast", {"label": "last"}),
    )
    s = session(tmp_path, Policy.build(auto_approve=True), turn, say("ok"))
    list(s.send("go"))
    assert ORDER == ["read before", "change", "read after", "last"]


def test_a_call_the_person_approves_still_runs_before_one_the_policy_allowed(
    tmp_path: Path,
) -> None:
    ORDER.clear()
    turn = call(("slow", {"label": "first"}), ("fast", {"label": "second"}))
    s = session(tmp_path, Policy.build(allow=["fast"]), turn, say("ok"))
    list(s.send("go"))
    pending = s.pending()
    assert pending is not None and [r["name"] for r in pending.action_requests] == ["slow"]
    events = list(s.decide([{"type": "approve"}]))
    assert isinstance(events[-1], Done)
    assert ORDER == ["first", "second"]


def later(run: dict[str, Any], *args: Any) -> threading.Thread:
    """A call of a turn in a thread of its own: what it was told is run["why"][call id].
    A call named in run["held"] runs until that event is set."""

    def body() -> None:
        with turn_of(*args) as why:
            run.setdefault("why", {})[args[2]] = why
            if why is None:
                run.setdefault("ran", []).append(args[2])
                held = run.get("held", {}).get(args[2])
                if held is not None:
                    until(held.is_set, what=f"call {args[2]} was let go")

    thread = threading.Thread(target=body)
    thread.start()
    return thread


def taken_up(thread_id: str, step: int, *call_ids: str) -> None:
    """Until the calls are on the task board: taken up, waiting for the ones before them."""

    def posted() -> bool:
        on_board = turn_order.BOARD._runs.get((thread_id, turn_order._board_run(step)), {})
        return all(call_id in on_board for call_id in call_ids)

    until(posted, what=f"calls {call_ids} were taken up")


def ended(*threads: threading.Thread) -> None:
    until(lambda: not any(t.is_alive() for t in threads), what="the calls ended")


def test_ctrl_c_stops_every_call_still_waiting_not_only_the_next() -> None:
    """A runs; B waits for A, C for B. Ctrl-C: neither B nor C runs (C is not let go by B
    giving up), and A is not cut short here."""
    cancel, a_may_end = threading.Event(), threading.Event()
    run: dict[str, Any] = {"held": {"A": a_may_end}}
    a = later(run, "t-chain", 9, "A", [], cancel)
    until(lambda: run.get("ran") == ["A"], what="A runs")
    b = later(run, "t-chain", 9, "B", ["A"], cancel)
    c = later(run, "t-chain", 9, "C", ["B"], cancel)
    taken_up("t-chain", 9, "B", "C")
    cancel.set()
    until(lambda: not (b.is_alive() or c.is_alive()), what="B and C gave up")
    a_may_end.set()
    ended(a)
    assert run["ran"] == ["A"] and run["why"]["A"] is None
    assert run["why"]["B"] == STOPPED and run["why"]["C"] in (STOPPED, AFTER_NOT_RUN)
    forget_turn("t-chain", 9)


def test_a_call_after_one_asked_about_waits_for_the_answer() -> None:
    """The call before it stops the run with a question (asked about again after a crash):
    this one leaves no result, to run with the run that answers."""
    run: dict[str, Any] = {}
    with pytest.raises(GraphInterrupt), turn_of("t-q", 5, "A", [], None):
        waiting = later(run, "t-q", 5, "B", ["A"], None)
        taken_up("t-q", 5, "B")
        raise GraphInterrupt(())
    ended(waiting)
    assert run["why"]["B"] == LATER and "ran" not in run
    forget_turn("t-q", 5)


def test_a_call_after_one_that_did_not_run_does_not_run() -> None:
    """The call before it failed without a result (its body raised): this one does not run
    either; the model is told why."""
    run: dict[str, Any] = {}
    with pytest.raises(RuntimeError), turn_of("t-asked", 5, "A", [], None):
        waiting = later(run, "t-asked", 5, "B", ["A"], None)
        taken_up("t-asked", 5, "B")
        raise RuntimeError("asked about again")
    ended(waiting)
    assert run["why"]["B"] == AFTER_NOT_RUN and "ran" not in run
    forget_turn("t-asked", 5)


def test_a_call_without_an_id_does_not_leave_the_next_one_waiting() -> None:
    turn = [{"name": "shell", "args": {}, "id": None}, c("shell", "b")]
    assert waits(turn) == [[], ["None"]]
    run: dict[str, Any] = {}
    with turn_of("t-none", 6, None, [], None) as why:
        assert why is None
    waiting = later(run, "t-none", 6, "b", waits(turn)[1], None)
    ended(waiting)
    assert run["ran"] == ["b"]
    forget_turn("t-none", 6)


def test_a_call_whose_predecessors_never_start_gives_up(monkeypatch: pytest.MonkeyPatch) -> None:
    """A server whose worker threads are all taken by waiting calls: the call before this
    one never starts, and this one does not wait for ever."""
    monkeypatch.setattr(turn_order, "TAKE_UP_S", 0.3)
    with turn_of("t-busy", 2, "B", ["A, never taken up"], None) as why:
        assert why == NOT_STARTED


def test_after_a_crash_a_call_waits_only_for_the_calls_not_saved() -> None:
    """Run again after a crash: A's result was saved (it ended in the process that died),
    B runs again here; C waits for B only, and runs after it."""
    b_may_end = threading.Event()
    run: dict[str, Any] = {"held": {"B": b_may_end}}
    saved = lambda: {"A"}  # noqa: E731
    b = later(run, "t-crash", 3, "B", ["A"], None, saved)
    until(lambda: run.get("ran") == ["B"], what="B runs")
    c_ = later(run, "t-crash", 3, "C", ["A", "B"], None, saved)
    taken_up("t-crash", 3, "C")
    assert run["ran"] == ["B"]  # C waits for B, still running
    b_may_end.set()
    ended(b, c_)
    assert run["ran"] == ["B", "C"]
    forget_turn("t-crash", 3)


def test_after_a_crash_a_call_that_cannot_tell_what_ended_does_not_run() -> None:
    def unreadable() -> set[str]:
        raise LookupError("no checkpoint")

    with turn_of("t-unread", 3, "B", ["A"], None, unreadable) as why:
        assert why == UNKNOWN
    with turn_of("t-unread", 3, "A2", [], None, unreadable) as why:
        assert why is None  # nothing before it: nothing to read
    forget_turn("t-unread", 3)


def test_a_stopped_call_tells_the_model_it_did_not_run(tmp_path: Path) -> None:
    """Ctrl-C while the second call waits: the first finishes, the second is answered as not
    run, and the history stays valid (every call has its tool message)."""
    ORDER.clear()
    turn = call(("slow", {"label": "first"}), ("fast", {"label": "second"}))
    s = session(tmp_path, Policy.build(auto_approve=True), turn, say("ok"))
    s.soft_ctrl_c = True  # as in chat: Ctrl-C stops the run
    SLOW_STARTED.clear()
    SLOW_MAY_END.clear()

    def stop_once_first_runs() -> None:  # Ctrl-C while "first" runs and "second" waits
        try:
            until(SLOW_STARTED.is_set, what="the first call started")
            s.stop()
        finally:
            SLOW_MAY_END.set()

    threading.Thread(target=stop_once_first_runs).start()
    with pytest.raises(Interrupted):
        list(s.send("go"))

    def both_answered() -> list[Any]:  # the run ends in its own thread, after "first"
        messages = s.state().values["messages"]
        return messages if sum(isinstance(m, ToolMessage) for m in messages) == 2 else []

    messages = until(both_answered, what="both calls have their tool message")
    results = {m.tool_call_id: m.content for m in messages if isinstance(m, ToolMessage)}
    ids = [tc["id"] for tc in turn.tool_calls]
    assert ORDER == ["first"]
    assert results[ids[1]] == STOPPED and results[ids[0]] == "first"
