"""A plan's tasks waiting for each other in the process (task_board.py) never wait for ever.

The tasks of a wave go to the tools node together; a task that needs another of its wave
waits on the board for that task's outcome. These try to make a task wait for an outcome
that never comes: a board shared by many plans (a LangGraph server runs every thread's plans
in one process), many plans at once on a small thread pool (the server runs sync nodes on
its event loop's default executor), a task that needs one that raises, asks a question, or
hangs, and Ctrl-C while tasks wait. Every wait is bounded in the test (a watchdog sets the
run's cancel event), so a task that would wait for ever shows up as deferred, not as a hang.
"""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command, interrupt

from agentcli.agent.graph import build_graph
from agentcli.agent.plan.plan_task import run_task
from agentcli.agent.review.approval_seals import ApprovalKey
from agentcli.agent.state import RunContext
from agentcli.agent.task_board import BOARD, KEPT_RUNS, Posted
from agentcli.policy.approval_policy import Policy
from tests.helpers.fakes import FakeChatModel, call, say
from tests.helpers.waiting import until
from tests.unit.conftest import RAN, note, peek

KEY = ApprovalKey(b"b" * 32)


def plan(*tasks: tuple[int, str, dict, list[int]]) -> Any:
    return call(
        ("plan", {"tasks": [{"id": i, "tool": t, "args": a, "deps": d} for i, t, a, d in tasks]})
    )


def one_task(call_id: str, run: str, waits: dict[str, str], cancel: threading.Event) -> dict:
    """Run one task of plan `run` (shell-free: the call just echoes) as the tools node does."""
    ctx = SimpleNamespace(policy=None, workspace=None, cancel=cancel)
    call_ = {"id": call_id, "name": "note", "args": {"text": f"{call_id} $1 $2"}}
    part = {"run": run, "given": {}, "waits": waits, "who": "person"}

    def ran(ready: dict) -> dict:
        return {"messages": [ToolMessage(f"did {ready['id']}", tool_call_id=ready["id"])]}

    return run_task(call_, part, ctx, KEY, "board", False, ran)["plan_results"][call_id]


def test_a_task_still_gets_what_it_waits_for_while_many_other_plans_run() -> None:
    """Task 3 needs tasks 1 and 2. Task 2 ends at once; task 1 takes long, and meanwhile
    the plans of other threads (KEPT_RUNS of them) leave outcomes on the same board."""
    run, cancel = "busy-server/plan", threading.Event()
    outcome: dict[str, Any] = {}
    waits = {"1": "c.1", "2": "c.2"}
    third = threading.Thread(target=lambda: outcome.update(one_task("c.3", run, waits, cancel)))
    third.start()
    one_task("c.2", run, {}, cancel)
    for other in range(KEPT_RUNS):  # a busy server: other threads' plans
        BOARD.post(f"thread-{other}", f"run-{other}", f"x{other}.1", Posted("done", "x"))
    one_task("c.1", run, {}, cancel)
    try:
        until(lambda: not third.is_alive(), what="task 3 got what it waited for")
    finally:
        cancel.set()  # the watchdog: a task still waiting gives up (deferred)
        third.join()
    assert outcome["outcome"] == "done", outcome


def test_a_task_waiting_when_ctrl_c_comes_gives_up_at_once_while_what_it_needs_hangs() -> None:
    run, cancel = "ctrl-c/plan", threading.Event()
    outcome: dict[str, Any] = {}
    waiting = threading.Thread(
        target=lambda: outcome.update(one_task("c.2", run, {"1": "c.1"}, cancel))
    )
    waiting.start()
    waiting.join(0.5)
    assert waiting.is_alive()  # task 1 never posts (it hangs)
    cancel.set()
    # at once: task 1 would hang for ever, and the board looks at Ctrl-C every 0.2 s
    until(lambda: not waiting.is_alive(), what="task 2 gave up on Ctrl-C", timeout=30)
    assert outcome == {"outcome": "deferred", "seal": outcome["seal"]}  # not run, sent again


# -- through the graph -----------------------------------------------------------------------

GATE = threading.Event()
ASKED: list[str] = []


@tool
def slow(text: str) -> str:
    """Wait for the gate, then say so.

    Args:
        text: what to say
    """
    RAN.append({"slow": text})
    if not GATE.wait(10):
        return "gate never opened"
    return f"slow {text}"


@tool
def ask_first(text: str) -> str:
    """Ask the person something (an interrupt from inside a tool), then say so.

    Args:
        text: what to say
    """
    answer = interrupt({"question": text})
    ASKED.append(answer)
    RAN.append({"asked": text})
    return f"asked {text}: {answer}"


class FailingJournal:
    """The call journal, whose first write for one call fails (a database that is locked)."""

    def __init__(self, failing: str) -> None:
        self.failing, self.failed, self.states = failing, False, {}

    def call_state(self, thread_id: str, key: str) -> str | None:
        return self.states.get(key)

    def call_started(self, thread_id: str, key: str) -> None:
        if key.startswith(self.failing + " ") and not self.failed:
            self.failed = True
            raise RuntimeError("database is locked")
        self.states[key] = "started"

    def call_process(self, *args: Any) -> None:
        pass

    def call_process_of(self, *args: Any) -> None:
        return None

    def call_finished(self, thread_id: str, key: str) -> None:
        self.states[key] = "finished"


def graph_with(tmp_path: Path, replies: list[Any]) -> tuple[Any, dict[str, Any]]:
    model = FakeChatModel(replies=replies, calls=[])
    tools = [note, peek, slow, ask_first]
    graph = build_graph(lambda: model, tools).compile(checkpointer=InMemorySaver())
    return graph, {"configurable": {"thread_id": "g"}, "recursion_limit": 400}


def _on_board() -> set[tuple[str, str, str]]:
    """(thread, run, call id) of every outcome on the board: a plan task posts when it ends."""
    with BOARD._changed:
        return {(t, r, c) for (t, r), calls in BOARD._runs.items() for c in calls}


def go(graph: Any, config: dict[str, Any], value: Any, ctx: RunContext, seconds: float = 60) -> Any:
    """Run in a thread with a watchdog: a run still going after `seconds` is cancelled."""
    error: list[BaseException] = []

    def target() -> None:
        try:
            graph.invoke(value, config, context=ctx)
        except BaseException as exc:  # noqa: BLE001 - reported to the test
            error.append(exc)

    runner = threading.Thread(target=target)
    runner.start()
    runner.join(seconds)
    hung = runner.is_alive()
    if hung and ctx.cancel is not None:
        ctx.cancel.set()
        GATE.set()
    runner.join(10)
    assert not hung, "the run waited for ever"
    return error[0] if error else None


def context(tmp_path: Path, **more: Any) -> RunContext:
    return RunContext(
        workspace=tmp_path, policy=Policy.build(auto_approve=True), cancel=threading.Event(), **more
    )


PLAN_MODE = {"messages": [HumanMessage("go", additional_kwargs={"plan": True})]}


def test_a_task_that_needs_one_that_raises_does_not_wait_and_runs_once_later(
    tmp_path: Path,
) -> None:
    RAN.clear()
    first = plan(
        (1, "note", {"text": "one"}, []),
        (2, "peek", {"path": "after $1"}, []),
        (3, "peek", {"path": "alone"}, []),
    )
    graph, config = graph_with(tmp_path, [first, say("three")])
    plan_call = first.tool_calls[0]["id"]
    journal = FailingJournal(f"{plan_call}.1")
    error = go(graph, config, PLAN_MODE, context(tmp_path, journal=journal))
    assert isinstance(error, RuntimeError) and "locked" in str(error)
    assert {"path": "after noted 'one' x1"} not in RAN
    assert go(graph, config, None, context(tmp_path, journal=journal)) is None  # continued
    assert RAN.count({"text": "one", "times": 1}) == 1
    assert RAN.count({"path": "after noted 'one' x1"}) == 1
    assert RAN.count({"path": "alone"}) == 1
    assert graph.get_state(config).values["messages"][-1].content == "three"


def test_a_task_that_needs_one_asking_a_question_waits_for_the_answer_not_for_ever(
    tmp_path: Path,
) -> None:
    RAN.clear()
    ASKED.clear()
    first = plan((1, "ask_first", {"text": "sure?"}, []), (2, "peek", {"path": "then $1"}, []))
    graph, config = graph_with(tmp_path, [first, say("asked and peeked")])
    assert go(graph, config, PLAN_MODE, context(tmp_path)) is None
    [question] = graph.get_state(config).interrupts
    assert question.value == {"question": "sure?"} and RAN == []
    assert go(graph, config, Command(resume="yes"), context(tmp_path)) is None
    assert ASKED == ["yes"]
    assert RAN == [{"asked": "sure?"}, {"path": "then asked sure?: yes"}]


def test_ctrl_c_while_a_task_waits_for_a_hanging_one_stops_the_run(tmp_path: Path) -> None:
    RAN.clear()
    GATE.clear()
    first = plan((1, "slow", {"text": "a"}, []), (2, "peek", {"path": "after $1"}, []))
    graph, config = graph_with(tmp_path, [first, say("done")])
    ctx = context(tmp_path)
    before = _on_board()

    def ctrl_c_then_open() -> None:
        until(lambda: RAN == [{"slow": "a"}], what="task 1 runs")
        ctx.cancel.set()  # Ctrl-C while task 2 waits
        ended = lambda: any(c.endswith(".2") for *_, c in _on_board() - before)  # noqa: E731
        until(ended, what="task 2 gave up")
        GATE.set()  # the hanging tool ends later, on its own

    threading.Thread(target=ctrl_c_then_open, daemon=True).start()
    error = go(graph, config, PLAN_MODE, ctx)
    assert error is not None and "interrupted" in str(error)
    assert RAN == [{"slow": "a"}]  # task 2 did not run with a half result
    assert go(graph, config, None, context(tmp_path)) is None  # continued, no Ctrl-C
    assert RAN == [{"slow": "a"}, {"path": "after slow a"}]  # each once


def test_many_plans_at_once_on_a_small_default_executor_all_finish(tmp_path: Path) -> None:
    """The server's way: astream, sync nodes on the loop's default executor, shared by
    every run. Eight plans of 20 chained tasks on two threads: each task waits only for
    tasks submitted before it, so the pool never fills with tasks waiting for queued ones."""
    RAN.clear()
    runs, length = 8, 20

    async def one(k: int) -> None:
        chain = [(1, "peek", {"path": f"r{k}"}, [])]
        chain += [
            (n, "peek", {"path": f"r{k}.{n} ${n - 1}"[:30]}, []) for n in range(2, length + 1)
        ]
        graph, config = graph_with(tmp_path, [plan(*chain), say(f"run {k}")])
        config["configurable"]["thread_id"] = f"g{k}"
        async for _ in graph.astream(
            PLAN_MODE, config, context=context(tmp_path), stream_mode=["updates", "custom"]
        ):
            pass

    async def main() -> None:
        asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(2))
        await asyncio.wait_for(asyncio.gather(*(one(k) for k in range(runs))), 60)

    asyncio.run(main())
    assert len(RAN) == runs * length


def test_a_collected_plan_leaves_nothing_on_the_board(tmp_path: Path) -> None:
    """Its outcomes go once the agent node collects them: a board that keeps only plans in
    flight forgets none a task still waits on, and a plan run again reads no stale outcome."""
    RAN.clear()
    first = plan((1, "peek", {"path": "a"}, []), (2, "peek", {"path": "b $1"}, []))
    graph, config = graph_with(tmp_path, [first, say("two")])
    assert go(graph, config, PLAN_MODE, context(tmp_path)) is None
    assert len(RAN) == 2
    assert not [key for key in BOARD._runs if key[0] == "g"]


def test_a_task_skipped_while_it_waited_is_audited_as_not_run() -> None:
    run, cancel = "skipped/plan", threading.Event()
    BOARD.post("board", run, "s.1", Posted("failed"))
    ctx = SimpleNamespace(policy=None, workspace=None, cancel=cancel)
    call_ = {"id": "s.2", "name": "note", "args": {"text": "after $1"}}
    part = {"run": run, "given": {}, "waits": {"1": "s.1"}, "who": "person"}
    update = run_task(call_, part, ctx, KEY, "board", False, lambda ready: {})
    assert update["plan_results"]["s.2"]["outcome"] == "skipped"
    [record] = update["audit_pending"]
    assert (record["decision"], record["by"]) == ("skipped", "plan: task 1 failed")
