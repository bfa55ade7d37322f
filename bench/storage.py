"""How a thread's storage grows: database size, load time and write time per turn.

Builds one chat thread through the real agent graph (Session, SqliteSaver,
durability="sync") with a scripted model: each turn is a user message, a calculator
call the policy allows, its result, and an answer of about 1.5 KB. At each size it
measures the database on disk (WAL checkpointed first), the median time of
`session.state()` on a fresh Store and Session (what a resume reads), and the mean
time of the last 10 turns written. State schemas run side by side, each in its own
process: `baseline` (plain add_messages and operator.add, as before DeltaChannel),
`current` (agentcli/agent/state.py as it is) and, with --snapshot-every, DeltaChannels with
other snapshot frequencies.

    .venv/bin/python bench/storage.py            # 10, 100 and 300 turns
    .venv/bin/python bench/storage.py --quick    # 2 and 5 turns: keeps the script working
    .venv/bin/python bench/storage.py --chat     # turns without a tool call
    .venv/bin/python bench/storage.py --snapshot-every 250,500,2000
    .venv/bin/python bench/storage.py --prose    # text that compresses as English does

The default text draws from 14 words, which zlib packs 3.6 to 1; --prose draws words from
the distribution of the project's README and docs (1.7 to 1 for one answer, as real prose
or a little worse), since the stored values are compressed (agentcli/threads/compression.py).
"""

from __future__ import annotations

import argparse
import json
import operator
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Annotated, Any, TypedDict, get_type_hints

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from langchain_core.language_models import BaseChatModel  # noqa: E402
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, ToolMessage  # noqa: E402
from langchain_core.outputs import ChatGeneration, ChatResult  # noqa: E402
from langgraph.channels import DeltaChannel  # noqa: E402
from langgraph.graph.message import add_messages  # noqa: E402

import agentcli.agent.state  # noqa: E402  (nothing may import agentcli.agent.agent_graph before the schema is set)
from agentcli.threads.langgraph_internals import messages_delta_reducer  # noqa: E402

VARIANTS = ("baseline", "current")
WORDS = "the a thread state message tool call result model answer file line test run".split()


class BaselineState(TypedDict, total=False):
    """agentcli's state before DeltaChannel: every checkpoint holds the whole lists."""

    messages: Annotated[list[AnyMessage], add_messages]
    allowed_tools: Annotated[list[str], agentcli.agent.state._union]
    invalid_turns: int
    audit: Annotated[list[dict[str, Any]], operator.add]
    review: dict[str, Any] | None


class ScriptedModel(BaseChatModel):
    """Calls the calculator after a user message, answers after its result."""

    answer_chars: int = 1500
    tools: bool = True

    @property
    def _llm_type(self) -> str:
        return "bench"

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedModel:
        return self

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        turn = len(messages)  # unique per call, and costs nothing (the model is not measured)
        if isinstance(messages[-1], ToolMessage) or not self.tools:
            reply = AIMessage(text(turn, self.answer_chars))
        else:
            call = {"name": "calculator", "args": {"expression": f"{turn} * 7 + 1"}}
            reply = AIMessage("", tool_calls=[{**call, "id": f"call_{turn}", "type": "tool_call"}])
        reply.usage_metadata = {"input_tokens": 40 * turn, "output_tokens": 300, "total_tokens": 0}
        return ChatResult(generations=[ChatGeneration(message=reply)])


PROSE: list[str] = []  # --prose: the words of the README and docs, repeats included


def text(seed: int, chars: int) -> str:
    rng = random.Random(seed)
    words: list[str] = []
    length = 0  # kept as it grows: summing the words each time made the model the cost
    while length < chars:
        words.append(
            rng.choice(PROSE) if PROSE else rng.choice(WORDS) + rng.choice(["", "", "", ".", ","])
        )
        length += len(words[-1]) + 1
    return " ".join(words)


def use_prose() -> None:
    documents = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    PROSE[:] = " ".join(path.read_text() for path in documents).split()


def db_bytes(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    wal = db.with_name(db.name + "-wal")
    return db.stat().st_size + (wal.stat().st_size if wal.exists() else 0)


def delta_state(every: int) -> type:
    """agentcli's state with another snapshot_frequency (for --snapshot-every)."""
    fields = get_type_hints(agentcli.agent.state.AgentState, include_extras=True)
    fields["messages"] = Annotated[
        list[AnyMessage], DeltaChannel(messages_delta_reducer, snapshot_frequency=every)
    ]
    fields["audit"] = Annotated[
        list[dict[str, Any]],
        DeltaChannel(agentcli.agent.state._extend, snapshot_frequency=max(1, every // 4)),
    ]
    return TypedDict("DeltaState", fields, total=False)  # type: ignore[operator]


def measure(
    variant: str, sizes: list[int], repeat: int, workdir: Path, answer_chars: int, chat: bool
) -> list[dict[str, Any]]:
    """Build one thread up to max(sizes) turns, measuring at each size (one process)."""
    if variant == "baseline":
        agentcli.agent.state.AgentState = BaselineState  # type: ignore[misc]
    elif variant != "current":
        agentcli.agent.state.AgentState = delta_state(int(variant.removeprefix("every=")))
    from agentcli_tools.calc import calculator

    from agentcli.config import Settings
    from agentcli.policy.approval_policy import Policy
    from agentcli.session.local import Session
    from agentcli.threads.sqlite_backend import SqliteStore

    db = workdir / f"{variant}.db"
    settings = Settings(db=str(db), model="bench")

    def session() -> Session:
        policy = Policy.build(auto_approve=True)
        return Session(
            settings,
            SqliteStore(db),
            policy,
            workspace=workdir,
            model=ScriptedModel(answer_chars=answer_chars, tools=not chat),
            tools=[calculator],
        )

    writer = session()
    results, turn_ms = [], []
    for turn in range(1, max(sizes) + 1):
        start = time.perf_counter()
        events = list(writer.send(f"Question {turn}: " + text(-turn, 200)))
        turn_ms.append((time.perf_counter() - start) * 1000)
        assert events[-1].status == "done", events[-1]
        if turn not in sizes:
            continue
        load_ms = []
        writer.store.release()  # the writer lets go, so readers may open the thread
        for _ in range(repeat):
            reader = session()
            reader.open(writer.thread_id)
            _ = reader.graph  # compiling the graph is not part of loading the state
            start = time.perf_counter()
            messages = reader.state().values["messages"]
            load_ms.append((time.perf_counter() - start) * 1000)
            reader.store.close()
            assert len(messages) == (2 if chat else 4) * turn, len(messages)
        results.append(
            {
                "variant": variant,
                "turns": turn,
                "bytes": db_bytes(db),
                "load_ms": statistics.median(load_ms),
                "write_ms": statistics.mean(turn_ms[-10:]),
            }
        )
    writer.store.close()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 and 5 turns, 3 loads")
    parser.add_argument("--sizes", default="10,100,300", help="turns, comma-separated")
    parser.add_argument("--repeat", type=int, default=9, help="loads per size (median)")
    parser.add_argument(
        "--snapshot-every",
        default="",
        metavar="N,..",
        help="also measure DeltaChannels with these snapshot_frequency values",
    )
    parser.add_argument("--answer-chars", type=int, default=1500, help="size of each answer")
    parser.add_argument("--chat", action="store_true", help="turns without a tool call")
    parser.add_argument("--prose", action="store_true", help="words of the README and docs")
    parser.add_argument("--schemas", default="", help="only these, comma-separated")
    parser.add_argument("--variant", help=argparse.SUPPRESS)  # set in the child processes
    args = parser.parse_args()
    if args.prose:
        use_prose()
    sizes, repeat = (
        ([2, 5], 3) if args.quick else ([int(s) for s in args.sizes.split(",")], args.repeat)
    )
    with tempfile.TemporaryDirectory(prefix="agentcli-bench-") as tmp:
        if args.variant:
            print(
                json.dumps(
                    measure(args.variant, sizes, repeat, Path(tmp), args.answer_chars, args.chat)
                )
            )
            return
        rows = []
        every = [f"every={n}" for n in args.snapshot_every.split(",") if n]
        for variant in [*VARIANTS, *every]:
            if args.schemas and variant not in args.schemas.split(","):
                continue
            child = [sys.executable, __file__, *sys.argv[1:], "--variant", variant]
            rows += json.loads(
                subprocess.run(child, check=True, capture_output=True, text=True).stdout
            )
    print(
        f"SNAPSHOT_EVERY={agentcli.agent.state.SNAPSHOT_EVERY},"
        f" {'chat' if args.chat else 'tool'} turns,"
        f" answers of {args.answer_chars} chars{' of prose' if args.prose else ''},"
        f" Python {sys.version.split()[0]}"
    )
    print(f"{'turns':>6} {'schema':<10} {'db MB':>8} {'load ms':>8} {'turn ms':>8}")
    for row in sorted(rows, key=lambda r: r["turns"]):  # stable: schemas keep their order
        print(
            f"{row['turns']:>6} {row['variant']:<10} {row['bytes'] / 1e6:>8.2f}"
            f" {row['load_ms']:>8.1f} {row['write_ms']:>8.1f}"
        )


if __name__ == "__main__":
    main()
