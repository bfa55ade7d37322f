"""A plan under review as the editor's plan: an entry per task (its tool and target, one
line), each marked completed as its result comes (a task's result call id ends `.N`)."""

from __future__ import annotations

from typing import Any

from acp.helpers import plan_entry, update_plan
from acp.schema import AgentPlanUpdate

from agentcli.acp.tool_calls import title


class PlanProgress:
    def __init__(self) -> None:
        self.tasks: list[tuple[str, str]] = []  # (task id, entry text)
        self.done: set[str] = set()

    def start(self, plan: list[dict[str, Any]]) -> AgentPlanUpdate:
        self.tasks = [(str(t.get("id")), title(str(t.get("tool")), t.get("args"))) for t in plan]
        self.done = set()
        return self._update()

    def result(self, call_id: str) -> AgentPlanUpdate | None:
        """The plan with the task whose result this is completed; None if it is none."""
        task = call_id.rsplit(".", 1)[-1] if "." in call_id else None
        if task is None or task in self.done or task not in dict(self.tasks):
            return None
        self.done.add(task)
        return self._update()

    def _update(self) -> AgentPlanUpdate:
        return update_plan(
            plan_entry(text, status="completed" if task in self.done else "pending")
            for task, text in self.tasks
        )
