"""What a thread waits on: its pending interrupts, then the questions its calls cut off by a
crash will ask when their tasks run again (review/cut_off_calls.py), a running plan's
tasks included (plan/plan_run.py), all found without running anything."""

from __future__ import annotations

from typing import Any

from agentcli.agent.plan.plan_run import running_calls
from agentcli.agent.review.cut_off_calls import cut_off


def waiting(snapshot: Any, journal: Any, thread_id: str) -> list[Any]:
    """`snapshot`: a StateSnapshot; `journal`: the call journal (the store)."""
    running = running_calls(snapshot.values)
    return [*snapshot.interrupts, *cut_off(snapshot, journal, thread_id, running)]
