"""Four approved tool calls from one model turn: readers side by side (issue 8, goal 5),
calls that may change files in the model's order.

A scripted in-process model asks for four calls of a tool that sleeps 0.5 s, in one turn,
then answers once it has the four results. Run one after another they would take 2 s;
the goal is that four reads finish in under 0.7 s, measured on two paths through a
long-lived Session (SqliteStore, the real graph):

- policy-approved: Policy.build(auto_approve=True); `send()` runs to the answer;
- person-approved: the default policy asks, so `send()` parks with a ReviewRequest of four
  calls; `session.decide([{"type": "approve"}] * 4)` is timed to the answer.

The tool is registered under the name of a built-in reader (`search_files`): agentcli runs
the reads of a turn side by side and every other call after the calls before it
(agent/executor.py). A third row runs the same sleep under another name (a tool that may
change files): the four take turns, in the order the model gave them (checked), so about
2 s is what that row should show.

"tools span" is the time from the first nap's start to the last one's end (0.5 s when
they all overlap). Each repetition is a new turn of the same thread; medians.


    .venv/bin/python bench/parallel.py            # 10 turns on each path, after a warm-up turn
    .venv/bin/python bench/parallel.py --quick    # one turn each, no warm-up
"""

from __future__ import annotations

import argparse
import tempfile
import threading
import time
from itertools import pairwise
from pathlib import Path
from typing import Any

from _common import machine, median, table, verdict  # puts the checkout first on sys.path
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool

from agentcli.config import Settings
from agentcli.events import ReviewRequest, ToolResult
from agentcli.policy.approval_policy import Policy
from agentcli.session.local import Session
from agentcli.threads.sqlite_backend import SqliteStore

CALLS = 4
NAP_S = 0.5
GOAL_MS = 700.0
READER = "search_files"  # a built-in reader's name: the reads of a turn run side by side
CHANGER = "nap"  # any other name: a call that may change files, run in turn
_spans: list[tuple[float, float, int]] = []
_lock = threading.Lock()


def _nap(n: int) -> str:
    """Sleep half a second.

    Args:
        n: which nap this is.
    """
    start = time.perf_counter()
    time.sleep(NAP_S)
    with _lock:
        _spans.append((start, time.perf_counter(), n))
    return f"slept {n}"


TOOLS = {name: tool(name)(_nap) for name in (READER, CHANGER)}


class NapModel(BaseChatModel):
    """Asks for CALLS naps after a user message; answers once it has their results."""

    tool_name: str = READER

    @property
    def _llm_type(self) -> str:
        return "bench"

    def bind_tools(self, tools: Any, **kwargs: Any) -> NapModel:
        return self

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        turn = sum(m.type == "human" for m in messages)
        if isinstance(messages[-1], ToolMessage):
            reply = AIMessage(f"all {CALLS} naps done")
        else:
            calls = [
                {"name": self.tool_name, "args": {"n": i}, "id": f"nap_{turn}_{i}"}
                for i in range(CALLS)
            ]
            reply = AIMessage("", tool_calls=calls)
        return ChatResult(generations=[ChatGeneration(message=reply)])


def span_ms(in_order: bool) -> float:
    with _lock:
        spans = _spans[:]
        _spans.clear()
    assert len(spans) == CALLS, spans
    if in_order:  # each started after the one before it ended, in the model's order
        ordered = sorted(spans)
        assert [n for *_, n in ordered] == list(range(CALLS)), ordered
        assert all(a[1] <= b[0] for a, b in pairwise(ordered)), ordered
    return (max(end for _, end, _ in spans) - min(start for start, _, _ in spans)) * 1000


def timed(events: Any) -> tuple[float, list[Any]]:
    start = time.perf_counter()
    drained = list(events)
    return (time.perf_counter() - start) * 1000, drained


def finished(events: list[Any]) -> None:
    results = [e for e in events if isinstance(e, ToolResult)]
    assert len(results) == CALLS and all(r.status == "success" for r in results), results
    assert events[-1].status == "done", events[-1]


def measure(
    person: bool, repeat: int, warmup: bool, tmp: Path, name: str = READER
) -> dict[str, list[float]]:
    db = tmp / f"{'person' if person else 'policy'}-{name}.db"
    session = Session(
        Settings(db=str(db), model="bench"),
        SqliteStore(db),
        Policy.build(auto_approve=not person),
        workspace=tmp,
        model=NapModel(tool_name=name),
        tools=[TOOLS[name]],
    )
    out: dict[str, list[float]] = {"run": [], "span": [], "park": []}
    for i in range(repeat + warmup):
        park_ms, events = timed(session.send(f"take {CALLS} naps"))
        if person:
            review = events[-2]
            assert isinstance(review, ReviewRequest) and len(review.action_requests) == CALLS
            assert events[-1].status == "awaiting_approval" and not _spans
            run_ms, events = timed(session.decide([{"type": "approve"}] * CALLS))
        else:
            run_ms = park_ms
        finished(events)
        span = span_ms(in_order=name == CHANGER)
        if i >= warmup:
            out["run"].append(run_ms)
            out["span"].append(span)
            out["park"].append(park_ms)
    session.store.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one turn on each path, no warm-up")
    parser.add_argument("--repeat", type=int, default=10, help="turns timed on each path")
    args = parser.parse_args()
    repeat = 1 if args.quick else args.repeat
    with tempfile.TemporaryDirectory(prefix="agentcli-bench-") as tmp:
        policy = measure(False, repeat, not args.quick, Path(tmp))
        person = measure(True, repeat, not args.quick, Path(tmp))
        changes = measure(False, repeat, not args.quick, Path(tmp), CHANGER)
    rows = []
    for name, data in [
        ("reads, policy-approved: send() to the answer", policy),
        ("reads, person-approved: decide() to the answer", person),
    ]:
        ms = median(data["run"])
        rows.append(
            [name, ms, min(data["run"]), median(data["span"]), GOAL_MS, verdict(ms, GOAL_MS)]
        )
    ms = median(changes["run"])
    rows.append(
        [
            "changes, in turn: send() to the answer",
            ms,
            min(changes["run"]),
            median(changes["span"]),
            None,
            "",
        ]
    )
    parked = person["park"]
    rows.append(
        [
            "reads, person-approved: send() to the review",
            median(parked),
            min(parked),
            None,
            None,
            "",
        ]
    )
    print(
        f"{machine()}; {CALLS} calls of a {NAP_S} s tool in one model turn;"
        f" {repeat} turns on each path\n"
    )
    print(table(["path", "median ms", "min ms", "tools span ms", "goal ms", "met"], rows))


if __name__ == "__main__":
    main()
