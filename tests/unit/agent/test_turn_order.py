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

from agentcli.agent.task_board import BOARD
from agentcli.agent.turn_order import STOPPED, in_order, turn_of, waits
from agentcli.config import Settings
from agentcli.errors import Interrupted
from agentcli.events import Done
from agentcli.policy.approval_policy import Policy
from agentcli.session.local import Session
from agentcli.threads.backends import open_store
from tests.helpers.fakes import FakeChatModel, call, say

ORDER: list[str] = []


@tool
def slow(label: str) -> str:
    """Take a while, then note the label.

    Args:
        label: what to note
    """
    time.sleep(0.2)
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
    assert ORDER == []  # the allowed call waits for the one asked about
    events = list(s.decide([{"type": "approve"}]))
    assert isinstance(events[-1], Done)
    assert ORDER == ["first", "second"]


def test_ctrl_c_while_a_call_waits_for_its_turn_means_it_never_runs() -> None:
    cancel = threading.Event()
    outcome: list[bool] = []

    def later() -> None:
        with turn_of("t-stop", 7, "second", ["first"], False, cancel) as go:
            outcome.append(go)

    waiter = threading.Thread(target=later)
    waiter.start()
    time.sleep(0.1)
    assert waiter.is_alive()  # "first" has not ended
    cancel.set()
    waiter.join(timeout=5)
    assert outcome == [False]
    assert STOPPED.startswith("not run")


def test_a_task_run_again_after_a_crash_waits_for_nothing() -> None:
    gone = ["first, ended in the process that died"]
    with turn_of("t-crash", 3, "second", gone, True, None) as go:
        assert go


def test_a_call_that_raises_still_lets_the_next_one_go() -> None:
    got: list[bool] = []

    def later() -> None:
        with turn_of("t-raise", 4, "second", ["first"], False, None) as go:
            got.append(go)

    waiter = threading.Thread(target=later)
    waiter.start()
    with pytest.raises(RuntimeError), turn_of("t-raise", 4, "first", [], False, None):
        raise RuntimeError("the tool failed")
    waiter.join(timeout=5)
    assert got == [True]
    BOARD.forget("t-raise", "turn at step 4")


def test_a_stopped_call_tells_the_model_it_did_not_run(tmp_path: Path) -> None:
    """Ctrl-C while the second call waits: the first finishes, the second is answered as not
    run, and the history stays valid (every call has its tool message)."""
    ORDER.clear()
    turn = call(("slow", {"label": "first"}), ("fast", {"label": "second"}))
    s = session(tmp_path, Policy.build(auto_approve=True), turn, say("ok"))
    s.soft_ctrl_c = True  # as in chat: Ctrl-C stops the run
    threading.Timer(0.1, s.stop).start()  # while "first" sleeps and "second" waits for it
    with pytest.raises(Interrupted):
        list(s.send("go"))
    deadline = time.monotonic() + 10  # the run ends in its own thread, after "first"
    while time.monotonic() < deadline:
        messages = s.state().values["messages"]
        if sum(isinstance(m, ToolMessage) for m in messages) == 2:
            break
        time.sleep(0.05)
    results = {m.tool_call_id: m.content for m in messages if isinstance(m, ToolMessage)}
    ids = [tc["id"] for tc in turn.tool_calls]
    assert ORDER == ["first"]
    assert results[ids[1]] == STOPPED and results[ids[0]] == "first"
