"""Where tools tasks running side by side in this process leave their outcomes for the
tasks that wait for them: the tasks of one plan wave (plan/plan_task.py), and the calls of
one model turn (turn_order.py).

A wave's tasks are sent together, each after the tasks it needs, so a task that waits here
only ever waits for tasks taken up before it (LangGraph's tools tasks run in the order they
were sent, on a first-come thread pool): waiting cannot go round in a circle. Every task
posts an outcome on every way out, so nothing waits for ever on a task that failed or
stopped; a task LangGraph runs again after a crash waits for nothing (plan_task.py).

Outcomes are kept until the agent node collects the wave or turn (`forget`: by then every
task of the step has ended), never while a task waits on them: a server runs every
thread's plans in one process, and a plan forgotten by count while one of its tasks ran
long left its waiting task without the outcome a sibling had already posted. KEPT_RUNS
bounds only plans left behind (a run that stopped before its wave was collected).
"""

from __future__ import annotations

import threading
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass

KEPT_RUNS = 256  # plans whose outcomes are kept; older ones nothing waits on are forgotten


@dataclass(frozen=True)
class Posted:
    outcome: str  # done | failed | skipped | refused | deferred
    value: str = ""  # what $N stands for, when done


class TaskBoard:
    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._runs: OrderedDict[tuple[str, str], dict[str, Posted]] = OrderedDict()
        self._waited: Counter[tuple[str, str]] = Counter()  # tasks waiting, per plan

    def post(self, thread_id: str, run: str, call_id: str, posted: Posted) -> None:
        with self._changed:
            self._runs.setdefault((thread_id, run), {})[call_id] = posted
            self._runs.move_to_end((thread_id, run))
            idle = [key for key in self._runs if not self._waited[key]]  # oldest first
            for key in idle[: max(0, len(self._runs) - KEPT_RUNS)]:
                del self._runs[key]
            self._changed.notify_all()

    def forget(self, thread_id: str, run: str) -> None:
        """The plan's outcomes, once its wave is collected (unless a task still waits)."""
        with self._changed:
            if not self._waited[(thread_id, run)]:
                self._runs.pop((thread_id, run), None)

    def wait(
        self,
        thread_id: str,
        run: str,
        call_ids: Iterable[str],
        stopped: Callable[[], bool] = lambda: False,
        final: Callable[[Posted], bool] = lambda posted: True,
    ) -> dict[str, Posted] | None:
        """The outcomes of `call_ids` once all are posted (and `final`, when a task posts
        more than once); None if `stopped()` first."""
        wanted = list(call_ids)
        key = (thread_id, run)
        with self._changed:
            self._waited[key] += 1
            try:
                while True:
                    posted = self._runs.get(key, {})
                    if all(c in posted and final(posted[c]) for c in wanted):
                        return {call_id: posted[call_id] for call_id in wanted}
                    if stopped():
                        return None
                    self._changed.wait(timeout=0.2)  # also to look at `stopped` now and then
            finally:
                self._waited[key] -= 1
                if not self._waited[key]:
                    del self._waited[key]


BOARD = TaskBoard()  # one per process: the tools tasks of its runs
