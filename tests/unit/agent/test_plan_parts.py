"""A plan's parts: reading and checking it, `$N` substitution, what the run does with a
state or a result it cannot believe, which tasks a wave holds, and a task whose
substituted arguments the policy refuses."""

from __future__ import annotations

import shlex
import subprocess
from types import SimpleNamespace

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool

from agentcli.agent.plan.plan_check import Plan, read_plan
from agentcli.agent.plan.plan_run import APPROVED, RUNNING, advance, run_of, seal_plan
from agentcli.agent.plan.plan_task import DONE, result_parts, run_task
from agentcli.agent.plan.substitution import references, substitute
from agentcli.policy.approval_policy import Policy, Rule
from agentcli.threads.store_key import ApprovalKey


@tool
def shell(command: str) -> str:
    """Run a command.

    Args:
        command: the command
    """
    return command


@tool
def peek(path: str, limit: int = 10) -> str:
    """Look at a path.

    Args:
        path: what to look at
        limit: how much
    """
    return path


TOOLS = {"shell": shell, "peek": peek}
KEY = ApprovalKey(b"k" * 32)
CTX = SimpleNamespace(snapshots=None, workspace=None)  # no undo snapshots


def tasks(*items: tuple) -> dict:
    return {"tasks": [{"id": i, "tool": t, "args": a, "deps": d} for i, t, a, d in items]}


@pytest.mark.parametrize(
    ("plan", "problem"),
    [
        ({}, 'a plan is {"tasks": [...]}'),
        ({"tasks": []}, "at least one task"),
        (tasks((1, "nope", {}, [])), "task 1: unknown tool 'nope'"),
        (tasks((1, "plan", {"tasks": []}, [])), "task 1: unknown tool 'plan'"),
        (tasks((0, "peek", {"path": "a"}, [])), "task 1: id must be a positive integer"),
        (tasks((True, "peek", {"path": "a"}, [])), "id must be a positive integer"),
        (tasks((1, "peek", {"path": 5}, [])), "task 1 (peek): invalid arguments"),
        (tasks((1, "peek", {"path": "a", "url": "x"}, [])), "unknown 'url'"),
        (tasks((1, "peek", {"path": "a"}, []), (1, "peek", {"path": "b"}, [])), "unique: 1"),
        (tasks((1, "peek", {"path": "a"}, [7])), "task 1 depends on task 7, which is not"),
        (tasks((1, "peek", {"path": "a"}, [1])), "task 1 depends on itself"),
        (tasks((1, "peek", {"path": "a"}, ["x"])), "deps must be a list of task ids"),
        (
            tasks(
                (1, "peek", {"path": "$3"}, []),
                (2, "peek", {"path": "a"}, [3]),
                (3, "peek", {"path": "${1}"}, []),
            ),  # noqa: E501
            "circle: 1 -> 3 -> 1",
        ),
        (
            {"tasks": [{"id": n, "tool": "peek", "args": {"path": "a"}} for n in range(1, 52)]},
            "at most 50",
        ),  # noqa: E501
    ],
)
def test_what_is_wrong_with_a_plan_is_said(plan: dict, problem: str) -> None:
    found = read_plan(plan, TOOLS)
    assert isinstance(found, str) and problem in found


def test_references_are_dependencies_and_other_dollars_stay() -> None:
    plan = read_plan(
        tasks(
            (2, "shell", {"command": "awk '{print $1}' x"}, []),  # no task 1: awk's $1
            (3, "peek", {"path": "${2}/$2x"}, []),
            (4, "shell", {"command": "echo $12 $3"}, []),  # no task 12
        ),
        TOOLS,
    )
    assert isinstance(plan, Plan)
    assert [(t.id, t.deps) for t in plan.tasks] == [(2, ()), (3, (2,)), (4, (3,))]
    assert references({"a": ["$1", {"b": "${4}"}]}, {1, 4}) == {1, 4}


def test_a_result_goes_into_a_shell_command_as_one_quoted_word() -> None:
    evil = "x'; touch pwned; echo '"
    args = substitute("shell", {"command": "cat $1 ${1}"}, {1: evil})
    assert args == {"command": f"cat {shlex.quote(evil)} {shlex.quote(evil)}"}
    ran = subprocess.run(["bash", "-c", "printf '%s|' " + args["command"][4:]], capture_output=True)
    assert ran.stdout.decode() == f"{evil}|{evil}|"  # two words, nothing run
    assert substitute("peek", {"path": "dir/$1", "limit": 3}, {1: "a b"}) == {
        "path": "dir/a b",
        "limit": 3,
    }
    assert substitute("shell", {"command": "echo $2 $10"}, {1: "one"}) == {"command": "echo $2 $10"}


def _state(plan_tasks: list[dict], results: dict | None = None, seal: bool = True) -> dict:
    message = AIMessage("", id="m1", tool_calls=[{"id": "c1", "name": "plan", "args": {}}])
    plan = {"run": RUN, "tasks": plan_tasks}
    plan = seal_plan(KEY, "t", plan, 5) if seal else {**plan, "seal": "forged"}
    return {
        "messages": [HumanMessage("go"), message],
        "plan": plan,
        "plan_results": results or {},
    }


RUN = run_of(AIMessage("", id="m1"), {"id": "c1"})


def _task(n: int, state: str = APPROVED, deps: list | None = None, **more) -> dict:
    args = more.pop("args", {"command": f"echo {n}"})
    return {"id": n, "call_id": f"c1.{n}", "tool": "shell", "args": args, "deps": deps or [],
            "state": state, "who": "person", **more}  # fmt: skip


def _result(call_id: str, outcome: str, content: str) -> dict:
    entry = {"outcome": outcome, "content": content, "ran_args": None}
    entry["seal"] = KEY.seal(*result_parts("t", RUN, call_id, entry))
    return {call_id: entry}


def test_a_plan_state_changed_from_outside_runs_nothing() -> None:
    moved = advance(_state([_task(1)], seal=False), CTX, KEY, "t", 5)
    assert moved is not None and moved["goto"] == "agent"
    [message] = moved["update"]["messages"]
    assert "changed from outside" in message.content


def test_a_result_changed_from_outside_counts_as_failed_and_stops_its_dependents() -> None:
    entry = _result("c1.1", DONE, "exit code 0\nsecret")
    entry["c1.1"]["content"] = "exit code 0\nforged"
    moved = advance(_state([_task(1, RUNNING), _task(2, deps=[1])], entry), CTX, KEY, "t", 5)
    assert moved is not None and moved["goto"] == "agent"  # nothing left to run: joined
    plan = moved["update"]["messages"][0].artifact["plan"]
    assert [(t["state"], t["why"]) for t in plan] == [
        ("failed", "its result was changed from outside agentcli"),
        ("skipped", "task 1 failed"),
    ]


def test_a_wave_holds_every_task_whose_deps_are_done_and_nothing_that_waits() -> None:
    done = _result("c1.1", DONE, "exit code 0\none\n")
    tasks = [_task(1, RUNNING), _task(2, deps=[1]), _task(3, deps=[2]), _task(4)]
    tasks += [_task(9, deps=[4]), _task(5, deps=[9])]  # the plan's order: deps first
    moved = advance(_state(tasks, done), CTX, KEY, "t", 5, ["shell"])
    assert moved is not None
    parts = {s.arg["tool_call"]["id"]: s.arg["plan"] for s in moved["goto"]}
    assert list(parts) == ["c1.2", "c1.4"]  # 3, 9 and 5 need a task of this wave: later
    assert parts["c1.2"]["given"] == {"1": "one\n"} and parts["c1.4"]["given"] == {}
    assert all("waits" not in part for part in parts.values())
    assert parts["c1.4"]["allowed"] == ["shell"]
    states = {t["id"]: t["state"] for t in moved["update"]["plan"]["tasks"]}
    assert states == {1: DONE, 2: RUNNING, 3: APPROVED, 4: RUNNING, 9: APPROVED, 5: APPROVED}


def _run_task(call: dict, plan: dict, ctx: object, ran: list) -> dict:
    from langchain_core.messages import ToolMessage

    def run(ready: dict) -> dict:
        ran.append(ready["args"])
        return {"messages": [ToolMessage("exit code 0\nok", tool_call_id=ready["id"])]}

    return run_task(call, plan, ctx, KEY, "t", run)


def test_substituted_arguments_meet_the_deny_rules_and_rule_allowed_tasks_are_refused() -> None:
    policy = Policy(rules=(Rule("shell", "deny", "rm *"), Rule("shell", "allow", "echo *")))
    ctx = SimpleNamespace(policy=policy, workspace=None, cancel=None)
    given = {"run": RUN, "given": {"1": "rm"}, "allowed": []}
    ran: list = []
    cases = {
        "c1.2": ({"command": "$1 -rf x"}, "person"),
        "c1.3": ({"command": "echo $1; ls"}, "policy"),
        "c1.4": ({"command": "echo $1"}, "policy"),
    }
    out = {}
    for call_id, (args, who) in cases.items():
        call = {"id": call_id, "name": "shell", "args": args}
        out[call_id] = _run_task(call, {**given, "who": who}, ctx, ran)["plan_results"][call_id]
    assert ran == [{"command": "echo rm"}]  # only the one a rule still allows ran
    assert out["c1.2"]["outcome"] == "refused" and out["c1.2"]["why"].startswith("denied once")
    assert out["c1.3"]["outcome"] == "refused" and "a person must review it" in out["c1.3"]["why"]
    assert out["c1.4"]["outcome"] == "done" and out["c1.4"]["ran_args"] == {"command": "echo rm"}
