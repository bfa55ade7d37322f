"""The one executor of approved calls (agent/executor.py), through Session and the graph:
the calls of a turn run in the model's order (reads side by side, a change after everything
before it), a plan's independent tasks side by side whatever their tools, each group
snapshotted once for undo, and a batch a client writes back is not believed."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from agentcli.agent.agent_graph import build_graph
from agentcli.agent.executor import STOPPED, Job, collect, dispatch, in_order, turn_groups
from agentcli.agent.state import RunContext
from agentcli.config import Settings
from agentcli.errors import Interrupted
from agentcli.events import Done
from agentcli.policy.approval_policy import Policy
from agentcli.session.local import Session
from agentcli.session.undo import plan_undo, restored_together
from agentcli.threads.backends import open_store
from agentcli.threads.store_key import ApprovalKey
from agentcli.undo.call_snapshots import WorkspaceSnapshots
from tests.helpers.fakes import FakeChatModel, call, say

ORDER: list[str] = []
SLOW_STARTED = threading.Event()
MEETING = threading.Barrier(2, timeout=20)  # two calls that must be running at the same time
WAIT_S = 20  # how long a call waits for another to be running: far beyond any load


@tool
def slow(label: str) -> str:
    """Take a while, then note the label.

    Args:
        label: what to note
    """
    SLOW_STARTED.set()
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
    if path.startswith("meet"):
        MEETING.wait()  # broken (an error) unless the other read runs at the same time
    return path


@tool
def touch(path: str) -> str:
    """Write a file once the other `touch` of the plan runs too (a call that changes files).

    Args:
        path: the file to write
    """
    MEETING.wait()
    (Path(WORKSPACE[0]) / path).write_text(path)
    ORDER.append(f"touch {path}")
    return f"wrote {path}"


WORKSPACE: list[Path] = []


@pytest.fixture(autouse=True)
def _fresh(tmp_path: Path) -> None:
    ORDER.clear()
    MEETING.reset()
    WORKSPACE[:] = [tmp_path]


def session(tmp_path: Path, policy: Policy, *replies: Any, snapshots: bool = False) -> Session:
    settings = Settings(db=str(tmp_path / "db.sqlite"), undo_snapshots=snapshots)
    model = FakeChatModel(replies=list(replies), calls=[])
    return Session(
        settings, open_store(settings), policy, workspace=tmp_path, model=model,
        tools=[slow, fast, reader, touch],
    )  # fmt: skip


def c(name: str, call_id: str) -> dict[str, Any]:
    return {"name": name, "args": {}, "id": call_id, "type": "tool_call"}


def plan(*tasks: tuple[int, str, dict, list[int]]) -> Any:
    return call(
        ("plan", {"tasks": [{"id": i, "tool": t, "args": a, "deps": d} for i, t, a, d in tasks]})
    )


def test_the_groups_of_a_turn() -> None:
    turn = [
        c("read_file", "r1"),
        c("write_file", "w1"),
        c("read_file", "r2"),
        c("list_dir", "r3"),
        c("shell", "s1"),
        c("read_file", "r4"),
        c("some_mcp_tool", "m1"),
        c("some_mcp_tool", "m2"),
    ]
    ids = [[x["id"] for x in group] for group in turn_groups(turn)]
    assert ids == [["r1"], ["w1"], ["r2", "r3"], ["s1"], ["r4"], ["m1"], ["m2"]]
    assert len(turn_groups([c("read_file", "a"), c("fetch_url", "b")])) == 1


def test_calls_go_in_the_order_of_the_model_s_turn_whoever_approved_them() -> None:
    turn = [c("shell", "1"), c("write_file", "2"), c("shell", "3")]
    approved = [turn[1], {**turn[0], "args": {"command": "edited"}}, turn[2]]  # policy first
    assert [x["id"] for x in in_order(approved, turn)] == ["1", "2", "3"]


def test_a_slow_change_runs_before_the_fast_one_the_model_put_after_it(tmp_path: Path) -> None:
    replies = []
    for n in range(3):
        replies += [call(("slow", {"label": f"{n}a"}), ("fast", {"label": f"{n}b"})), say("ok")]
    s = session(tmp_path, Policy.build(auto_approve=True), *replies)
    for n in range(3):
        events = list(s.send(f"turn {n}"))
        assert isinstance(events[-1], Done), events
    assert ORDER == ["0a", "0b", "1a", "1b", "2a", "2b"]


def test_reads_wait_for_the_change_before_them_and_changes_for_the_reads(tmp_path: Path) -> None:
    turn = call(
        ("read_file", {"path": "before"}),
        ("slow", {"label": "change"}),
        ("read_file", {"path": "after"}),
        ("fast", {"label": "last"}),
    )
    s = session(tmp_path, Policy.build(auto_approve=True), turn, say("ok"))
    list(s.send("go"))
    assert ORDER == ["read before", "change", "read after", "last"]


def test_reads_next_to_each_other_run_side_by_side(tmp_path: Path) -> None:
    """Each read waits (on a barrier) until the other runs too: run one after the other,
    the first would wait out its timeout and fail."""
    turn = call(("read_file", {"path": "meet 1"}), ("read_file", {"path": "meet 2"}))
    s = session(tmp_path, Policy.build(auto_approve=True), turn, say("ok"))
    list(s.send("go"))
    results = [m for m in s.state().values["messages"] if isinstance(m, ToolMessage)]
    assert sorted(m.content for m in results) == ["meet 1", "meet 2"]
    assert all(m.status != "error" for m in results)


def test_a_call_the_person_approves_still_runs_before_one_the_policy_allowed(
    tmp_path: Path,
) -> None:
    turn = call(("slow", {"label": "first"}), ("fast", {"label": "second"}))
    s = session(tmp_path, Policy.build(allow=["fast"]), turn, say("ok"))
    list(s.send("go"))
    pending = s.pending()
    assert pending is not None and [r["name"] for r in pending.action_requests] == ["slow"]
    events = list(s.decide([{"type": "approve"}]))
    assert isinstance(events[-1], Done)
    assert ORDER == ["first", "second"]


def test_independent_plan_tasks_that_change_files_run_side_by_side_and_undo_as_one(
    tmp_path: Path,
) -> None:
    """Two tasks that may change files, no dep between them, undo's snapshots on: both run
    at once (each waits on a barrier for the other), one record holds them, and undo says
    it takes them back together."""
    both = plan((1, "touch", {"path": "a.txt"}, []), (2, "touch", {"path": "b.txt"}, []))
    s = session(tmp_path, Policy.build(auto_approve=True), both, say("ok"), snapshots=True)
    events = list(s.send("write both", plan=True))
    assert isinstance(events[-1], Done), events
    assert sorted(ORDER) == ["touch a.txt", "touch b.txt"]
    snapshots = WorkspaceSnapshots(s.settings.snapshots_dir)
    [record] = snapshots.changes(s.thread_id, tmp_path)
    plan_id = both.tool_calls[0]["id"]
    assert record.calls == [f"{plan_id}.1", f"{plan_id}.2"]
    undo = plan_undo(s.store, s.settings, s.store.resolve(s.thread_id), None)
    assert undo.restoration is not None and sorted(undo.restoration.paths) == ["a.txt", "b.txt"]
    [said] = restored_together(undo)
    assert f"{plan_id}.1, {plan_id}.2" in said


def test_a_plan_task_runs_only_once_the_tasks_it_needs_have_ended(tmp_path: Path) -> None:
    chain = plan(
        (1, "slow", {"label": "one"}, []),
        (2, "fast", {"label": "two after $1"}, []),
        (3, "fast", {"label": "three"}, []),
    )
    s = session(tmp_path, Policy.build(auto_approve=True), chain, say("ok"))
    list(s.send("go", plan=True))
    assert ORDER.index("three") < ORDER.index("two after one")  # 3 in the first wave, 2 next
    assert ORDER.index("one") < ORDER.index("two after one")


def test_ctrl_c_between_groups_stops_the_rest_of_the_turn_and_says_so(tmp_path: Path) -> None:
    """Ctrl-C while the first call runs: it finishes, the second is answered as not run,
    and the history stays valid (every call has its tool message)."""
    turn = call(("slow", {"label": "first"}), ("fast", {"label": "second"}))
    s = session(tmp_path, Policy.build(auto_approve=True), turn, say("ok"))
    s.soft_ctrl_c = True  # as in chat: Ctrl-C stops the run
    SLOW_STARTED.clear()

    def stop_once_first_runs() -> None:
        SLOW_STARTED.wait(WAIT_S)
        s.stop()

    threading.Thread(target=stop_once_first_runs).start()
    with pytest.raises(Interrupted):
        list(s.send("go"))
    s.wait_stopped()
    messages = s.state().values["messages"]
    results = {m.tool_call_id: m.content for m in messages if isinstance(m, ToolMessage)}
    ids = [tc["id"] for tc in turn.tool_calls]
    assert ORDER == ["first"]
    assert results == {ids[0]: "first", ids[1]: STOPPED}
    skipped = [r for r in s.state().values["audit"] if r["decision"] == "skipped"]
    assert [r["call_id"] for r in skipped] == [ids[1]]


KEY = ApprovalKey(b"e" * 32)


def test_a_batch_read_at_another_step_than_its_own_is_not_believed() -> None:
    """A batch written back later (by a client of a server, or left by a run the person
    moved on from) sends nothing and records nothing."""
    ctx = SimpleNamespace(snapshots=None, workspace=None, cancel=None)
    jobs = [[Job(c("shell", f"s{n}"))] for n in range(3)]
    sends, batch = dispatch(ctx, KEY, "t", 5, "turn", jobs[0], jobs[1:])
    assert [s.arg["tool_call"]["id"] for s in sends] == ["s0"] and batch is not None
    for step in (3, 6, 8, 9):
        done = collect({"batch": batch}, ctx, KEY, "t", step)
        assert (done.update, done.goto) == ({"batch": None}, None)
    assert collect({"batch": batch}, ctx, KEY, "other thread", 7).goto is None
    forged = {**batch, "left": [[{"call": c("shell", "evil")}]]}
    assert collect({"batch": forged}, ctx, KEY, "t", 7).goto is None
    nxt = collect({"batch": batch}, ctx, KEY, "t", 7)  # the control: its own step
    assert [s.arg["tool_call"]["id"] for s in nxt.goto] == ["s1"]


def test_a_run_paused_between_groups_goes_on_with_the_next_group_once(tmp_path: Path) -> None:
    """Stopped after the first group's tools step (as a crash would leave it): the run that
    continues sends the second group, and the first does not run again."""
    turn = call(("slow", {"label": "1"}), ("fast", {"label": "2"}))
    model = FakeChatModel(replies=[turn, say("ok"), say("again")], calls=[])
    graph = build_graph(lambda: model, [slow, fast]).compile(checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "g"}}
    ctx = RunContext(workspace=tmp_path, policy=Policy.build(auto_approve=True))
    graph.invoke({"messages": [HumanMessage("go")]}, config, context=ctx, interrupt_after=["tools"])
    assert ORDER == ["1"]
    spent = graph.get_state(config).values["batch"]
    graph.invoke(None, config, context=ctx)
    assert ORDER == ["1", "2"]
    assert graph.get_state(config).values["messages"][-1].content == "ok"
    assert graph.get_state(config).values.get("batch") is None
    # a client that writes the spent batch back gets nothing run again
    graph.invoke(Command(update={"batch": spent}, goto="agent"), config, context=ctx)
    assert ORDER == ["1", "2"]
    assert graph.get_state(config).values["messages"][-1].content == "again"
