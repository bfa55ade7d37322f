"""What a client of a LangGraph server writes or sends cannot make a plan's task run without
the person's approval, nor run an approved one twice (issue 20).

Driven on the graph as LangGraph Server runs it (the server's context, an in-memory
checkpointer), with what any client can do: write the `plan`, `plan_results`, `review` and
`messages` channels (`Command(update=...)`, RemoveMessage included), send tasks
(`Command(goto=Send("tools", ...))`) copied from the thread's own checkpoints, and pause a run
between steps (`interrupt_after`, a per-run option of the server's API).

The plan: task 1 notes PAY (a side effect that must happen once), task 2 looks at its result.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.errors import InvalidUpdateError
from langgraph.types import Command, Send

from agentcli.agent.agent_graph import build_graph
from agentcli.agent.plan.plan_run import advance, run_of, seal_plan
from agentcli.agent.plan.plan_task import result_parts
from agentcli.audit.records import NOT_APPROVED
from agentcli.config import Settings
from agentcli.server.graph import context_schema
from agentcli.threads.store_key import PROCESS_KEY
from tests.helpers.fakes import FakeChatModel, call, say
from tests.unit.conftest import RAN, note, peek

CTX = SimpleNamespace(snapshots=None, workspace=None)  # no undo snapshots

PAY = {"text": "PAY", "times": 1}
EVIL = {"text": "EVIL"}
APPROVE_BOTH = {"decisions": [{"type": "approve"}, {"type": "approve"}]}


def plan(*tasks: tuple[int, str, dict, list[int]]) -> Any:
    return call(
        ("plan", {"tasks": [{"id": i, "tool": t, "args": a, "deps": d} for i, t, a, d in tasks]})
    )


class Thread:
    """One thread on the server's graph, and what a client of it can do."""

    def __init__(
        self, tmp_path: Path, *replies: Any, first: Any = None, plan_mode: bool = True
    ) -> None:
        first = first or plan((1, "note", {"text": "PAY"}, []), (2, "peek", {"path": "$1"}, []))
        self.model = FakeChatModel(replies=[first, *replies], calls=[])
        self.saver = InMemorySaver()
        schema = context_schema(Settings(), tmp_path)
        graph = build_graph(lambda: self.model, [note, peek], schema)
        self.graph = graph.compile(checkpointer=self.saver)
        self.config: dict[str, Any] = {"configurable": {"thread_id": "t"}}
        marks = {"plan": True} if plan_mode else {}
        self.run({"messages": [HumanMessage("pay", additional_kwargs=marks)]})

    def run(self, value: Any, **options: Any) -> None:
        self.graph.invoke(value, self.config, context={}, **options)

    @property
    def values(self) -> dict[str, Any]:
        return dict(self.graph.get_state(self.config).values)

    def history(self) -> list[dict[str, Any]]:
        """Every checkpoint's values, oldest first (`threads.get_history`)."""
        return [dict(s.values) for s in reversed(list(self.graph.get_state_history(self.config)))]

    def approved_plan(self) -> dict[str, Any]:
        """The sealed plan as the approve node left it: every task approved, none run."""
        return next(
            v["plan"]
            for v in self.history()
            if v.get("plan") and all(t["state"] == "approved" for t in v["plan"]["tasks"])
        )

    def sent(self) -> list[Send]:
        """The sealed tools tasks the agent node sent, as saved in the checkpoints."""
        found = []
        for writes in self.saver.writes.values():
            for _, channel, value, _ in writes.values():
                loaded = self.saver.serde.loads_typed(value)
                if channel == "__pregel_tasks" and isinstance(loaded, Send):
                    found.append(loaded)
        return found

    def audit(self) -> list[dict[str, Any]]:
        return list(self.values.get("audit") or [])


def joined_then_reopened(thread: Thread) -> list[RemoveMessage]:
    """Removals of the plan's one result and the model's answer after it: the plan call
    looks unanswered again."""
    messages = thread.values["messages"]
    return [RemoveMessage(id=m.id) for m in messages[-2:]]


def attack(thread: Thread, how: str) -> None:
    """One client's attempt; the person approves the plan as shown (both tasks)."""
    run = thread.run
    if how == "replay_plan_after_join":  # the plan ran; its approved state written back
        run(Command(resume=APPROVE_BOTH))
        update = {"messages": joined_then_reopened(thread), "plan": thread.approved_plan()}
        run(Command(update=update, goto="agent"))
    elif how == "replay_plan_mid_run":  # the run paused after its tools step
        run(Command(resume=APPROVE_BOTH), interrupt_after=["tools"])
        run(Command(update={"plan": thread.approved_plan()}, goto="agent"))
    elif how == "fork_from_the_approved_checkpoint":  # a run from an older checkpoint
        run(Command(resume=APPROVE_BOTH))
        [approved] = [
            s
            for s in thread.graph.get_state_history(thread.config)
            if s.next == ("agent",) and s.values.get("plan") == thread.approved_plan()
        ]
        thread.graph.invoke(None, approved.config, context={})
    elif how == "plan_args_changed":  # the approved plan with task 1 changed, seal kept
        run(Command(resume=APPROVE_BOTH))
        forged = thread.approved_plan()
        forged["tasks"][0] = {**forged["tasks"][0], "args": EVIL}
        run(Command(update={"messages": joined_then_reopened(thread), "plan": forged}))
        run(Command(goto="agent"))
    elif how == "plan_task_added":  # a third task, approved, seal kept
        run(Command(resume=APPROVE_BOTH))
        forged = thread.approved_plan()
        extra = {**forged["tasks"][0], "id": 3, "call_id": "x.3", "args": EVIL}
        forged["tasks"] = [*forged["tasks"], extra]
        run(Command(update={"messages": joined_then_reopened(thread), "plan": forged}))
        run(Command(goto="agent"))
    elif how == "plan_sealed_for_another_thread":  # a seal this key made, thread "other"
        run(Command(resume=APPROVE_BOTH))
        body = {k: v for k, v in thread.approved_plan().items() if k != "seal"}
        body["tasks"][0]["args"] = EVIL
        # for the step the agent task will read it at: only the thread is wrong
        step = thread.graph.get_state(thread.config).metadata["step"] + 1
        forged = seal_plan(PROCESS_KEY, "other", body, step)
        run(Command(update={"messages": joined_then_reopened(thread), "plan": forged}))
        run(Command(goto="agent"))
    elif how == "plan_written_at_the_review":  # before the person decided
        turn = thread.values["messages"][-1]
        run_id = f"{turn.id}/{turn.tool_calls[0]['id']}"
        task = {"id": 1, "call_id": "x.1", "tool": "note", "args": EVIL, "deps": []}
        forged = {"run": run_id, "tasks": [{**task, "state": "approved", "who": "person"}]}
        run(Command(update={"plan": {**forged, "seal": "0" * 64}}, goto="agent"))
        # the forged plan is refused (the plan call is answered "changed from outside"), and
        # the approve task still pending with it writes `plan` in the same step: LangGraph
        # refuses that step, now and on every resume. The client wedged the review; nothing ran
        with pytest.raises(InvalidUpdateError):
            run(Command(resume=APPROVE_BOTH))
        assert RAN == []
        return
    elif how == "result_copied_to_another_task":  # task 1's sealed result as task 2's
        run(Command(resume=APPROVE_BOTH), interrupt_after=["tools"])
        results = thread.values["plan_results"]
        first, one = next((k, v) for k, v in results.items() if k.endswith(".1"))
        two = first.removesuffix(".1") + ".2"  # not sent yet: it needs task 1's result
        run(Command(update={"plan_results": {two: one}}, goto="agent"))
    elif how == "result_forged":  # a result in task 2's name, unsealed
        run(Command(resume=APPROVE_BOTH), interrupt_after=["tools"])
        first = next(k for k in thread.values["plan_results"] if k.endswith(".1"))
        two = first.removesuffix(".1") + ".2"
        forged = {"outcome": "done", "content": "", "why": None, "ran_args": None}
        run(Command(update={"plan_results": {two: forged}}, goto="agent"))
    elif how == "send_sealed_task_again":  # the sealed tools tasks, sent once more
        run(Command(resume=APPROVE_BOTH))
        run(Command(goto=thread.sent()))
    elif how == "send_sealed_task_with_evil_args":
        run(Command(resume=APPROVE_BOTH))
        forged = [
            Send("tools", {**s.arg, "tool_call": {**s.arg["tool_call"], "args": EVIL}})
            for s in thread.sent()
            if s.arg["tool_call"]["name"] == "note"
        ]
        run(Command(goto=forged))
    elif how == "send_unsealed_plan_task":
        call_ = {"id": "x.1", "name": "note", "args": EVIL}
        part = {"run": "r", "given": {}, "who": "person", "allowed": []}
        task = {"__type": "tool_call_with_context", "tool_call": call_, "state": {}, "plan": part}
        run(Command(goto=Send("tools", task)))
        run(Command(resume=APPROVE_BOTH))
    elif how == "review_task_swapped":  # the review's verdict names task 1 with EVIL
        review = thread.values["review"]
        asking = [dict(a) for a in review["asking"]]
        asking[0] = {**asking[0], "call": {**asking[0]["call"], "args": EVIL}}
        run(Command(update={"review": {**review, "asking": asking}}, resume=APPROVE_BOTH))
    elif how == "plan_message_rewritten":  # the plan call itself, under its id, with EVIL
        message = thread.values["messages"][-1]
        [plan_call] = message.tool_calls
        tasks = [dict(t) for t in plan_call["args"]["tasks"]]
        tasks[0]["args"] = EVIL
        changed = message.model_copy(
            update={"tool_calls": [{**plan_call, "args": {"tasks": tasks}}]}
        )
        run(Command(update={"messages": [changed]}, resume=APPROVE_BOTH))
    else:
        raise AssertionError(how)
    state = thread.graph.get_state(thread.config)
    if state.interrupts:  # the person answers what they are shown: a new review approved,
        # a task that may have run already marked done
        requests = state.interrupts[0].value["action_requests"]
        said = [{"type": "done" if r.get("rerun") else "approve"} for r in requests]
        run(Command(resume={"decisions": said}))


PAYLOADS = [
    "replay_plan_after_join",
    "replay_plan_mid_run",
    "fork_from_the_approved_checkpoint",
    "plan_args_changed",
    "plan_task_added",
    "plan_sealed_for_another_thread",
    "plan_written_at_the_review",
    "result_copied_to_another_task",
    "result_forged",
    "send_sealed_task_again",
    "send_sealed_task_with_evil_args",
    "send_unsealed_plan_task",
    "review_task_swapped",
    "plan_message_rewritten",
]


@pytest.mark.parametrize("how", PAYLOADS)
def test_nothing_a_client_writes_or_sends_runs_a_task_unapproved_or_twice(
    tmp_path: Path, how: str
) -> None:
    RAN.clear()
    thread = Thread(tmp_path, say("paid"), say("paid again"), say("and again"))
    attack(thread, how)
    assert {"text": "EVIL", "times": 1} not in RAN
    assert RAN.count(PAY) <= 1, f"PAY ran {RAN.count(PAY)} times"
    assert len([r for r in RAN if "path" in r]) <= 1
    runs = [r for r in thread.audit() if r["decision"] in ("approved", "allowed", "edited")]
    assert all(r["args"] != EVIL for r in runs)
    if how.startswith("send_") and how != "send_sealed_task_again":
        assert any(r["by"] == NOT_APPROVED for r in thread.audit())


def test_a_run_from_any_checkpoint_of_the_plan_runs_no_task_again(tmp_path: Path) -> None:
    """Forks: a client may run a thread from any of its checkpoints (`checkpoint_id`)."""
    RAN.clear()
    thread = Thread(tmp_path, *(say(f"answer {n}") for n in range(12)))
    thread.run(Command(resume=APPROVE_BOTH))
    assert RAN.count(PAY) == 1
    history = list(thread.graph.get_state_history(thread.config))
    approved_at = next(
        s.metadata["step"] for s in reversed(history) if (s.values.get("plan") or {}).get("tasks")
    )
    forks = [s for s in history if s.metadata["step"] >= approved_at and s.next]
    assert len(forks) >= 3  # the approved plan, its tools step, the join
    for snapshot in forks:
        thread.graph.invoke(None, snapshot.config, context={})
        state = thread.graph.get_state(thread.config)
        if state.interrupts:  # a task that may have run is marked done, never run again
            requests = state.interrupts[0].value["action_requests"]
            said = [{"type": "done" if r.get("rerun") else "reject"} for r in requests]
            thread.run(Command(resume={"decisions": said}))
    assert RAN.count(PAY) == 1, f"PAY ran {RAN.count(PAY)} times"


def test_a_plan_sealed_for_one_step_is_not_believed_at_another() -> None:
    """What stops the replays: the agent task reads the plan at the step it was sealed for."""
    message = AIMessage("", id="m1", tool_calls=[{"id": "c1", "name": "plan", "args": {}}])
    task = {"id": 1, "call_id": "c1.1", "tool": "note", "args": {"text": "PAY"}, "deps": []}
    body = {"run": run_of(message, message.tool_calls[0]), "tasks": [{**task, "state": "approved"}]}
    state = {
        "messages": [HumanMessage("go"), message],
        "plan": seal_plan(PROCESS_KEY, "t", body, 5),
    }
    sent = advance(state, CTX, PROCESS_KEY, "t", 5)
    assert sent is not None and [s.node for s in sent["goto"]] == ["tools"]
    for step in (3, 4, 6, 7, 9):
        later = advance(state, CTX, PROCESS_KEY, "t", step)
        assert later is not None and later["goto"] == "agent"
        assert "changed from outside" in later["update"]["messages"][0].content


def test_the_plan_runs_once_when_nothing_is_changed(tmp_path: Path) -> None:
    """The control: the same plan, approved, runs each task once and joins."""
    RAN.clear()
    thread = Thread(tmp_path, say("paid"))
    thread.run(Command(resume=APPROVE_BOTH))
    assert RAN == [PAY, {"path": "noted 'PAY' x1"}]
    result = [m for m in thread.values["messages"] if isinstance(m, ToolMessage)][-1]
    assert result.content.startswith("Plan results (2 tasks):")


def test_the_sealed_result_of_a_task_checks_out_as_saved(tmp_path: Path) -> None:
    """The control for the forged results: the saved entries carry seals that verify."""
    RAN.clear()
    thread = Thread(tmp_path, say("paid"))
    thread.run(Command(resume=APPROVE_BOTH), interrupt_after=["tools"])
    run = thread.values["plan"]["run"]
    for call_id, entry in thread.values["plan_results"].items():
        assert PROCESS_KEY.check(entry["seal"], *result_parts("t", run, call_id, entry))


PAYLOADS_TURNS = ["plan_in_a_turn_not_in_plan_mode", "plan_beside_another_call"]


@pytest.mark.parametrize("how", PAYLOADS_TURNS)
def test_a_plan_call_out_of_place_runs_nothing(tmp_path: Path, how: str) -> None:
    RAN.clear()
    if how == "plan_in_a_turn_not_in_plan_mode":
        thread = Thread(tmp_path, say("I cannot plan here"), plan_mode=False)
    else:
        both = call(("plan", {"tasks": [{"id": 1, "tool": "note", "args": EVIL}]}), ("note", EVIL))
        thread = Thread(tmp_path, say("one call then"), first=both)
    assert RAN == [] and not thread.graph.get_state(thread.config).interrupts
    told = [m for m in thread.values["messages"] if isinstance(m, ToolMessage)]
    assert told and all(m.status == "error" for m in told)
