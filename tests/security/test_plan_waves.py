"""A plan's waves never wait for ever and run each task once (agent/executor.py).

The tasks of a wave are those whose deps are done; they run side by side and the next wave
starts once they have all ended. These try to make a task wait for an outcome that never
comes, or run twice: a task that needs one that raises, asks a question, or hangs, Ctrl-C
while a wave runs, and many plans at once on a small thread pool (the server runs sync
nodes on its event loop's default executor, shared by every run). Every run is bounded in
the test (a watchdog sets the run's cancel event), so a wait for ever shows up, not a hang.
"""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from langchain_core.messages import HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command, interrupt

from agentcli.agent.agent_graph import build_graph
from agentcli.agent.state import RunContext
from agentcli.policy.approval_policy import Policy
from tests.helpers.fakes import FakeChatModel, call, say
from tests.unit.conftest import RAN, note, peek


def plan(*tasks: tuple[int, str, dict, list[int]]) -> Any:
    return call(
        ("plan", {"tasks": [{"id": i, "tool": t, "args": a, "deps": d} for i, t, a, d in tasks]})
    )


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


def go(graph: Any, config: dict[str, Any], value: Any, ctx: RunContext, seconds: float = 20) -> Any:
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
    stopper = threading.Timer(0.5, ctx.cancel.set)  # Ctrl-C while task 2 waits
    stopper.start()
    opener = threading.Timer(1.5, GATE.set)  # the hanging tool ends later on its own
    opener.start()
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
