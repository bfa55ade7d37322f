"""A `plan` call's arguments read as a plan, or why they cannot be one.

A plan is checked like any call before a person sees it: each task names a tool of the
session (never `plan`) with arguments its schema takes, ids are unique positive integers,
`deps` name tasks of the plan, and nothing depends on itself, directly or in a circle. A
`$N` or `${N}` in a string argument, N a task of the plan, makes task N a dependency too
(other dollars, such as awk's `$1` in a plan without a task 1, are left as they are). What
is wrong goes back to the model, like invalid arguments.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import ToolCall
from langchain_core.tools import BaseTool

from agentcli.agent.plan import MAX_TASKS
from agentcli.agent.plan.result_targets import placement
from agentcli.agent.plan.substitution import references
from agentcli.agent.review.argument_check import validate_args
from agentcli.agent.toolset.servers_down import down_server
from agentcli.events import PLAN


@dataclass(frozen=True)
class Task:
    id: int
    tool: str
    args: dict[str, Any]
    deps: tuple[int, ...]  # what the model listed and what its arguments use, sorted

    def call_id(self, plan_call_id: str) -> str:
        """The task's call id: the plan call's, a dot, the task's number."""
        return f"{plan_call_id}.{self.id}"

    def call(self, plan_call_id: str) -> ToolCall:
        """The task as a tool call."""
        return {"id": self.call_id(plan_call_id), "name": self.tool, "args": self.args}


@dataclass(frozen=True)
class Plan:
    tasks: tuple[Task, ...]  # in an order where every task comes after its deps

    @property
    def by_id(self) -> list[Task]:
        """The tasks as the model numbered them: the order a person reads them in."""
        return sorted(self.tasks, key=lambda task: task.id)


def read_plan(args: Any, by_name: Mapping[str, BaseTool]) -> Plan | str:
    """The plan in a `plan` call's arguments, or what is wrong with it."""
    tasks = args.get("tasks") if isinstance(args, Mapping) else None
    if not isinstance(tasks, list) or not tasks:
        return 'a plan is {"tasks": [...]} with at least one task'
    if len(tasks) > MAX_TASKS:
        return f"a plan has at most {MAX_TASKS} tasks; this one has {len(tasks)}"
    known = [name for name in by_name if name != PLAN]
    read: list[tuple[Any, str, dict[str, Any], list[Any]]] = []
    for index, raw in enumerate(tasks, 1):
        if not isinstance(raw, Mapping):
            return f"task {index} is not an object with id, tool, args and deps"
        task_id, tool, task_args = raw.get("id"), raw.get("tool"), raw.get("args", {})
        deps = raw.get("deps", [])
        if not _positive(task_id):
            return f"task {index}: id must be a positive integer, got {task_id!r}"
        if isinstance(tool, str) and tool not in by_name and (down := down_server(tool)):
            return f"task {task_id}: {down}"
        if not isinstance(tool, str) or tool == PLAN or tool not in by_name:
            return f"task {task_id}: unknown tool {tool!r}. Available tools: {', '.join(known)}"
        if problem := validate_args(by_name[tool], task_args, known):
            return f"task {task_id} ({tool}): {problem}"
        if not isinstance(deps, list) or not all(_positive(d) for d in deps):
            return f"task {task_id}: deps must be a list of task ids"
        read.append((task_id, tool, task_args, deps))
    ids = [task_id for task_id, *_ in read]
    if len(set(ids)) != len(ids):
        twice = sorted({i for i in ids if ids.count(i) > 1})
        return f"task ids must be unique: {', '.join(map(str, twice))} used more than once"
    plan: dict[int, Task] = {}
    for task_id, tool, task_args, deps in read:
        needed = set(deps) | references(task_args, set(ids))
        if missing := sorted(needed - set(ids)):
            return f"task {task_id} depends on task {missing[0]}, which is not in the plan"
        if task_id in needed:
            return f"task {task_id} depends on itself"
        if problem := placement(tool, task_args, set(ids)):
            return f"task {task_id} ({tool}): {problem}"
        plan[task_id] = Task(task_id, tool, task_args, tuple(sorted(needed)))
    ordered = _in_order(plan)
    if isinstance(ordered, str):
        return ordered
    return Plan(tuple(ordered))


def _positive(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _in_order(plan: Mapping[int, Task]) -> list[Task] | str:
    """The tasks with each after its deps (ties by id), or the circle that prevents it."""
    done: list[Task] = []
    placed: set[int] = set()
    waiting = sorted(plan)
    while waiting:
        ready = [i for i in waiting if set(plan[i].deps) <= placed]
        if not ready:
            return f"the tasks depend on each other in a circle: {_circle(plan, waiting)}"
        for task_id in ready:
            done.append(plan[task_id])
            placed.add(task_id)
        waiting = [i for i in waiting if i not in placed]
    return done


def _circle(plan: Mapping[int, Task], waiting: Sequence[int]) -> str:
    """One circle among the tasks left, as "1 -> 3 -> 1"."""
    path: list[int] = []
    current = waiting[0]
    while current not in path:
        path.append(current)
        current = next(d for d in plan[current].deps if d in waiting)
    circle = [*path[path.index(current) :], current]
    return " -> ".join(map(str, circle))
