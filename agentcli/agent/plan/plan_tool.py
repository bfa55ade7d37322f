"""The `plan` tool the model calls in plan mode: its schema, its description (every tool it
may plan, with their arguments), and how a turn says it is in plan mode.

The tool never runs: the review node reads a call of it as a plan (plan_check.py)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.tools import BaseTool, StructuredTool
from langchain_core.utils.function_calling import convert_to_openai_tool

from agentcli.agent.plan import PLAN_FLAG
from agentcli.events import PLAN

INSTRUCTIONS = """Plan mode: do not call tools one by one. Call the `plan` tool once with every
step the request needs: tasks with an id (1, 2, ...), the tool, its arguments, and `deps`, the
ids of the tasks that must finish first. A string argument may contain $N or ${N}: task N's
result goes there when the task runs (N then runs first). The person reviews the whole plan;
then the tasks run, independent ones at the same time, and you read every result. Then answer,
or call `plan` again if more steps are needed."""

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "tasks": {
            "type": "array",
            "description": "The steps, each a call of one tool.",
            "items": {
                "type": "object",
                "properties": {
                    "id": {"type": "integer", "description": "1, 2, ...: unique in the plan"},
                    "tool": {"type": "string", "description": "the tool to call"},
                    "args": {
                        "type": "object",
                        "description": "its arguments; strings may use $N for task N's result",
                    },
                    "deps": {
                        "type": "array",
                        "items": {"type": "integer"},
                        "description": "ids of the tasks that must finish first",
                    },
                },
                "required": ["id", "tool", "args"],
            },
        }
    },
    "required": ["tasks"],
}


def plan_tool(tools: Sequence[BaseTool]) -> BaseTool:
    """The `plan` tool, describing the tools a plan may use."""
    return StructuredTool(
        name=PLAN,
        description=describe(tools),
        args_schema=SCHEMA,
        func=_never_runs,
    )


def describe(tools: Sequence[BaseTool]) -> str:
    lines = [
        "Plan the steps of the request as tasks that run as a graph once the person approves.",
        "Each task calls one of these tools (arguments as JSON schema):",
    ]
    for tool in tools:
        function = convert_to_openai_tool(tool)["function"]
        summary = (function.get("description") or "").strip().splitlines()
        schema = json.dumps(function.get("parameters", {}), ensure_ascii=False)
        lines.append(f"- {function['name']}: {summary[0] if summary else ''} {schema}")
    return "\n".join(lines)


def _never_runs(**_: Any) -> str:
    raise RuntimeError("the plan tool is read by the review node, never run")


def task_call_ids(call: Mapping[str, Any]) -> list[str]:
    """The ids a call's runs are recorded under: a plan's tasks (plan_check.Task.call_id),
    in the order the model numbered them, or the call's own."""
    tasks = (call.get("args") or {}).get("tasks") if call.get("name") == PLAN else None
    if not isinstance(tasks, list):
        return [str(call.get("id"))]
    numbers = [t.get("id") for t in tasks if isinstance(t, Mapping)]
    return [f"{call.get('id')}.{n}" for n in numbers if isinstance(n, int)]


def planning(messages: Sequence[BaseMessage]) -> bool:
    """Whether the thread's current turn is in plan mode: its user message says so."""
    for message in reversed(messages):
        if isinstance(message, HumanMessage):
            return bool((message.additional_kwargs or {}).get(PLAN_FLAG))
    return False
