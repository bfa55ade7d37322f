"""Plan mode against the tool loop on one multi-step task (issue 20's benchmark).

The task needs six calls of `lookup`, a tool that takes 0.5 s: three independent lookups,
two that use their results (4 needs 1 and 2, 5 needs 3), and one that uses those two (6
needs 4 and 5). A scripted in-process model takes 1 s per call and counts tokens as the
server would see them: the JSON of the request (messages and tools) and of its answer, 4
bytes a token. Every path runs the real graph through a Session on SQLite, every call
allowed by policy (the person's time is not measured):

- plan: one `plan` call with the six tasks, then the answer: 2 model calls, 3 waves;
- loop, one call a turn (ReAct as the LLMCompiler paper compares with): 7 model calls;
- loop, parallel calls: each turn asks for every call it can already make: 4 model calls.

The goal (issue 20): plan mode at least 2x faster and at most 0.6x the tokens of the loop.

A second task (issue 26) runs agentcli's own `shell` tool, undo's snapshots on, as a
person's session would: four independent `sleep 1` commands. Plan mode runs them side by
side (one wave: agent/executor.py); the loops run them one after the other (each call may
change files, so it runs after every call before it). Goal: plan mode at least 2x faster
than the one-call loop.

    .venv/bin/python bench/plan.py             # 3 rounds, interleaved; medians
    .venv/bin/python bench/plan.py --quick     # one round, the model and tools 10x faster
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import machine, median, table, verdict  # puts the checkout first on sys.path
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from langchain_core.utils.function_calling import convert_to_openai_tool

from agentcli.config import Settings
from agentcli.events import Done
from agentcli.policy.approval_policy import Policy
from agentcli.session.local import Session
from agentcli.threads.sqlite_backend import SqliteStore

SCALE = {"model": 1.0, "tool": 0.5, "shell": 1.0}
# task: (topic, the tasks whose results it uses)
TASKS: dict[int, tuple[str, tuple[int, ...]]] = {
    1: ("prices", ()),
    2: ("stock", ()),
    3: ("reviews", ()),
    4: ("margin", (1, 2)),
    5: ("sentiment", (3,)),
    6: ("report", (4, 5)),
}
SHELL: dict[int, tuple[str, tuple[int, ...]]] = {n: ("sleep", ()) for n in range(1, 5)}


@tool
def lookup(topic: str) -> str:
    """Look a topic up (slowly).

    Args:
        topic: what to look up, with what earlier lookups found.
    """
    time.sleep(SCALE["tool"])
    return f"notes on {topic[:40]}: " + "lorem ipsum dolor sit amet " * 6


def _args(task: int, results: dict[int, str] | None, workload: str) -> dict[str, str]:
    if workload == "shell":
        return {"command": f"sleep {SCALE['shell']}; echo {task}"}
    topic, uses = TASKS[task]
    if results is None:  # plan mode: the results are put in when the task runs
        return {"topic": " ".join([topic, *(f"${n}" for n in uses)])}
    return {"topic": " ".join([topic, *(results[n][:60] for n in uses)])}


class ScriptedModel(BaseChatModel):
    """Takes SCALE["model"] s a call; answers as its `mode` plans or loops."""

    mode: str = "plan"
    workload: str = "lookup"  # or "shell"
    tools: list[Any] = []

    @property
    def _llm_type(self) -> str:
        return "bench"

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedModel:
        return self.model_copy(update={"tools": [convert_to_openai_tool(t) for t in tools]})

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        time.sleep(SCALE["model"])
        reply = self._reply(messages)
        sent = json.dumps([m.model_dump(mode="json") for m in messages]) + json.dumps(self.tools)
        out = json.dumps(reply.model_dump(mode="json"))
        prompt, answer = len(sent.encode()) // 4, len(out.encode()) // 4
        reply.usage_metadata = {
            "input_tokens": prompt,
            "output_tokens": answer,
            "total_tokens": prompt + answer,
        }
        return ChatResult(generations=[ChatGeneration(message=reply)])

    def _reply(self, messages: list[BaseMessage]) -> AIMessage:
        last_user = max(i for i, m in enumerate(messages) if isinstance(m, HumanMessage))
        turn = messages[last_user + 1 :]
        done = {int(m.tool_call_id.rsplit("_", 1)[1]): m.text for m in turn if _ours(m)}
        graph, tool_name = (SHELL, "shell") if self.workload == "shell" else (TASKS, "lookup")
        if self.mode == "plan":
            if any(isinstance(m, ToolMessage) for m in turn):
                return AIMessage("The report is ready.")
            tasks = [
                {
                    "id": n,
                    "tool": tool_name,
                    "args": _args(n, None, self.workload),
                    "deps": list(graph[n][1]),
                }
                for n in graph
            ]
            return AIMessage("", tool_calls=[_call("plan", {"tasks": tasks}, "plan_0")])
        ready = [n for n in graph if n not in done and set(graph[n][1]) <= set(done)]
        if not ready:
            return AIMessage("The report is ready.")
        chosen = ready if self.mode == "parallel" else ready[:1]
        calls = [_call(tool_name, _args(n, done, self.workload), f"call_{n}") for n in chosen]
        return AIMessage("", tool_calls=calls)


def _ours(message: BaseMessage) -> bool:
    return isinstance(message, ToolMessage) and message.tool_call_id.startswith("call_")


def _call(name: str, args: dict[str, Any], call_id: str) -> dict[str, Any]:
    return {"name": name, "args": args, "id": call_id, "type": "tool_call"}


def measure(mode: str, tmp: Path, round_: int, workload: str = "lookup") -> tuple[float, int, int]:
    """(wall seconds, model calls, tokens) of one run of the task on a new thread. The
    shell workload runs agentcli's built-in tools (the shell among them), undo's snapshots
    on, in a workspace of its own."""
    db = tmp / f"{workload}-{mode}-{round_}.db"
    shell = workload == "shell"
    workspace = tmp / f"ws-{workload}-{mode}-{round_}"
    workspace.mkdir()
    model = ScriptedModel(mode=mode, workload=workload)
    session = Session(
        Settings(db=str(db), model="bench", undo_snapshots=shell),
        SqliteStore(db),
        Policy.build(auto_approve=True),
        workspace=workspace,
        model=model,
        tools=None if shell else [lookup],
    )
    start = time.perf_counter()
    events = list(session.send("write the report", plan=mode == "plan"))
    wall = time.perf_counter() - start
    done = events[-1]
    assert isinstance(done, Done) and done.final == "The report is ready.", done
    messages = session.state().values["messages"]
    calls = sum(isinstance(m, AIMessage) for m in messages)
    session.store.close()
    return wall, calls, int(done.usage["total_tokens"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one round, everything 10x faster")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    rounds = 1 if args.quick else args.rounds
    if args.quick:
        SCALE.update(model=0.1, tool=0.05)
        SCALE.update(shell=0.1)
    modes = ["plan", "sequential", "parallel"]
    found: dict[str, list[tuple[float, int, int]]] = {m: [] for m in modes}
    shell: dict[str, list[tuple[float, int, int]]] = {m: [] for m in modes}
    with tempfile.TemporaryDirectory(prefix="agentcli-bench-") as tmp:
        for round_ in range(rounds):  # interleaved: noise hits every mode alike
            for mode in modes:
                found[mode].append(measure(mode, Path(tmp), round_))
                shell[mode].append(measure(mode, Path(tmp), round_, "shell"))
    wall = {m: median([w for w, _, _ in found[m]]) for m in modes}
    tokens = {m: median([t for _, _, t in found[m]]) for m in modes}
    rows = []
    for mode, name in [
        ("plan", "plan mode"),
        ("sequential", "loop, one call a turn"),
        ("parallel", "loop, parallel calls"),
    ]:
        calls = found[mode][0][1]
        rows.append([name, wall[mode], calls, tokens[mode]])
    speedup = wall["sequential"] / wall["plan"]
    share = tokens["plan"] / tokens["sequential"]
    print(
        f"{machine()}; six {SCALE['tool']} s tools, a model taking {SCALE['model']} s a call;"
        f" {rounds} round(s), medians\n"
    )
    print(table(["path", "wall s", "model calls", "tokens"], rows))
    print()
    print(
        table(
            ["against the one-call loop", "measured", "goal", "met"],
            [
                ["speed-up (x)", speedup, 2.0, verdict(1 / speedup, 0.5)],
                ["tokens (share)", share, 0.6, verdict(share, 0.6)],
                ["speed-up over the parallel loop (x)", wall["parallel"] / wall["plan"], None, ""],
                ["tokens vs the parallel loop", tokens["plan"] / tokens["parallel"], None, ""],
            ],
        )
    )
    print(
        f"\nshell tasks: four independent `sleep {SCALE['shell']}` commands through agentcli's"
        " shell tool, undo's snapshots on\n"
    )
    shell_wall = {m: median([w for w, _, _ in shell[m]]) for m in modes}
    print(
        table(
            ["path", "wall s", "model calls"],
            [
                ["shell tasks, plan mode", shell_wall["plan"], shell["plan"][0][1]],
                [
                    "shell tasks, loop, one call a turn",
                    shell_wall["sequential"],
                    shell["sequential"][0][1],
                ],
                [
                    "shell tasks, loop, parallel calls",
                    shell_wall["parallel"],
                    shell["parallel"][0][1],
                ],
            ],
        )
    )
    print()
    shell_speedup = shell_wall["sequential"] / shell_wall["plan"]
    print(
        table(
            ["against the one-call loop", "measured", "goal", "met"],
            [["shell tasks, speed-up (x)", shell_speedup, 2.0, verdict(1 / shell_speedup, 0.5)]],
        )
    )


if __name__ == "__main__":
    main()
