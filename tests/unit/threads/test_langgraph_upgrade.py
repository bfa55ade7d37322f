"""An upgrade of LangGraph that moves an internal agentcli relies on fails here, by name.

Each check below exercises one internal of threads/langgraph_internals.py the way agentcli
uses it, on the installed langgraph, langgraph-checkpoint, its savers and
langgraph-runtime-inmem; a failure reads "langgraph internal X moved: ...". The last tests
keep every other module of agentcli off LangGraph's internals, so that this list stays
the whole of them.
"""

from __future__ import annotations

import ast
import logging
import operator
import os
import pickle
import re
import sqlite3
import tomllib
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langgraph.channels import DeltaChannel
from langgraph.checkpoint.memory import InMemorySaver, PersistentDict
from langgraph.checkpoint.serde.encrypted import EncryptedSerializer
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode, ToolRuntime
from langgraph.runtime import Runtime
from langgraph.types import Send, interrupt

from agentcli.config import Settings
from agentcli.threads import langgraph_internals as internals
from agentcli.threads.backends import open_store
from agentcli.threads.langgraph_internals import (
    ERROR_CHANNEL,
    INTERRUPT,
    CachingSerializer,
    Recall,
    checkpoint_serializer,
    fork_tables,
    messages_delta_reducer,
    persist_dev_state,
    rewrite_writes,
    step_checkpoint,
    with_runtime,
)
from tests.helpers import ROOT

CONFIG = {"configurable": {"thread_id": "t"}}
WAIT_S = 30.0  # a condition another thread makes true: generous, for a loaded machine


class Counted(TypedDict, total=False):
    n: Annotated[list[int], operator.add]


@dataclass
class Where:
    name: str


def graph(node: Callable[..., Any], saver: Any = None, **nodes: Callable[..., Any]) -> Any:
    """START -> node (-> each of `nodes`, by Send from `node` when it returns Sends)."""
    builder = StateGraph(Counted, context_schema=Where)
    builder.add_node("node", node)
    for name, extra in nodes.items():
        builder.add_node(name, extra)
    builder.add_edge(START, "node")
    return builder.compile(checkpointer=saver or InMemorySaver())


def check_runtime_key() -> None:
    """with_runtime: a ToolNode called with it gives its tools that runtime's context."""

    @tool
    def where(runtime: ToolRuntime[Where]) -> str:
        """Say the context."""
        return str(runtime.context.name)

    def node(state: Counted, runtime: Runtime[Where], config: RunnableConfig) -> dict[str, Any]:
        call = {"name": "where", "args": {}, "id": "c1", "type": "tool_call"}
        task = {"__type": "tool_call_with_context", "tool_call": call, "state": {}}
        result = ToolNode([where]).invoke(
            task, with_runtime(config, runtime.override(context=Where("B")))
        )
        assert result["messages"][0].content == "B", result
        return {"n": [1]}

    assert graph(node).invoke({"n": []}, CONFIG, context=Where("A")) == {"n": [1]}


def check_checkpoint_map_key() -> None:
    """step_checkpoint: the id of the checkpoint the running step started from."""
    seen: list[str | None] = []

    def node(state: Counted, config: RunnableConfig) -> dict[str, Any]:
        seen.append(step_checkpoint(config))
        return {"n": [1]}

    g = graph(node)
    g.invoke({"n": []}, CONFIG)
    before = [s for s in g.get_state_history(CONFIG) if s.next == ("node",)]
    assert len(before) == 1 and seen == [before[0].config["configurable"]["checkpoint_id"]], seen


def check_error_channel() -> None:
    """ERROR_CHANNEL: a failed task's exception is saved as a write on that channel."""
    saver, channels = InMemorySaver(), []

    def seen(writes: Any) -> list[tuple[str, Any]]:
        channels.extend(channel for channel, _ in writes)
        return list(writes)

    rewrite_writes(saver, seen)

    def node(state: Counted) -> dict[str, Any]:
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        graph(node, saver).invoke({"n": []}, CONFIG)
    assert ERROR_CHANNEL in channels, channels


def check_task_path_by_signature() -> None:
    """rewrite_writes: LangGraph still hands a wrapped put_writes each task's path."""
    saver, paths = InMemorySaver(), []
    put = saver.put_writes

    def recording(config: Any, writes: Any, task_id: str, task_path: str = "") -> None:
        paths.append(task_path)
        put(config, writes, task_id, task_path)

    saver.put_writes = recording  # type: ignore[method-assign]
    rewrite_writes(saver, list)

    def fan_out(state: Counted) -> Any:
        return [Send("one", {"n": [1]}), Send("two", {"n": [2]})]

    builder = StateGraph(Counted)
    builder.add_node("one", lambda state: {"n": [1]})
    builder.add_node("two", lambda state: {"n": [2]})
    builder.add_conditional_edges(START, fan_out, ["one", "two"])
    builder.compile(checkpointer=saver).invoke({"n": []}, CONFIG, durability="sync")
    assert len(paths) >= 2 and all(paths), paths


def check_interrupt_key() -> None:
    """INTERRUPT: the key of an "updates" stream part that carries interrupts."""

    def node(state: Counted) -> dict[str, Any]:
        interrupt("ask")
        return {}

    parts = list(graph(node).stream({"n": []}, CONFIG, stream_mode="updates"))
    assert any(INTERRUPT in part for part in parts), parts


def check_messages_delta_reducer() -> None:
    """messages_delta_reducer: add_messages for a DeltaChannel, across its full copies."""

    class State(TypedDict, total=False):
        messages: Annotated[
            list[AnyMessage], DeltaChannel(messages_delta_reducer, snapshot_frequency=2)
        ]

    builder = StateGraph(State)
    builder.add_node("node", lambda state: {})
    builder.add_edge(START, "node")
    builder.add_edge("node", END)
    g = builder.compile(
        checkpointer=SqliteSaver(sqlite3.connect(":memory:", check_same_thread=False))
    )
    sent = [
        [HumanMessage("a", id="1")],
        [AIMessage("b", id="2")],
        [AIMessage("b, edited", id="2"), HumanMessage("c", id="3")],
        [HumanMessage("d", id="4")],
    ]
    expected: list[Any] = []
    for messages in sent:
        g.invoke({"messages": messages}, CONFIG)
        expected = add_messages(expected, messages)
    assert g.get_state(CONFIG).values["messages"] == expected


def check_delta_history_walk() -> None:
    """Recall: LangGraph loads a DeltaChannel through the saver's get_delta_channel_history."""
    walks: list[Any] = []

    class Saver(Recall, SqliteSaver):
        def get_delta_channel_history(self, **kwargs: Any) -> Any:
            walks.append(kwargs["channels"])
            return super().get_delta_channel_history(**kwargs)

    class State(TypedDict, total=False):
        messages: Annotated[list[AnyMessage], DeltaChannel(messages_delta_reducer)]

    builder = StateGraph(State)
    builder.add_node("node", lambda state: {"messages": [AIMessage("b")]})
    builder.add_edge(START, "node")
    g = builder.compile(checkpointer=Saver(sqlite3.connect(":memory:", check_same_thread=False)))
    g.invoke({"messages": [HumanMessage("a")]}, CONFIG)
    g.invoke({"messages": [HumanMessage("c")]}, CONFIG)
    assert walks and all(channels == ["messages"] for channels in walks), walks


def check_msgpack_ext_hook() -> None:
    """CachingSerializer: a full copy's messages decode through `_unpack_ext_hook`."""
    serde = CachingSerializer()
    message = HumanMessage("a", id="1")
    data = serde.dumps_typed({"messages": internals._DeltaSnapshot([message])})
    first, again = serde.loads_typed(data), serde.loads_typed(data)
    assert first["messages"].value == [message] and len(serde._cache) == 1
    assert first["messages"].value[0] is again["messages"].value[0]


def check_allowlist_through_the_wrapper(caplog: pytest.LogCaptureFixture) -> None:
    """checkpoint_serializer: compiling a graph keeps a strict allowlist inside the wrapper."""
    saver = InMemorySaver(serde=checkpoint_serializer())
    with caplog.at_level(logging.WARNING):
        strict = saver.with_allowlist([("decimal", "Decimal")])
    assert isinstance(strict.serde, EncryptedSerializer), strict.serde
    assert isinstance(strict.serde.serde, CachingSerializer), strict.serde.serde
    assert "allowlist" not in caplog.text, caplog.text


def check_dev_state_stores(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """persist_dev_state: `langgraph dev`'s stores, written in the format they load."""
    persistence = pytest.importorskip("langgraph_runtime_inmem._persistence")
    stores = persistence._stores
    assert isinstance(stores, dict), type(stores)
    stores.clear()  # importing the runtime registered its store under this process's folder
    kept = PersistentDict(filename=str(tmp_path / "runs.pckl"))
    kept["run"] = {"status": "running"}
    monkeypatch.setattr(persistence, "_stores", {kept.filename: weakref.ref(kept)})
    assert persist_dev_state() == 1
    loaded = PersistentDict(filename=kept.filename)
    loaded.load()
    assert dict(loaded) == {"run": {"status": "running"}}
    assert pickle.loads(Path(kept.filename).read_bytes()) == dict(kept)


def check_dev_checkpointer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """persist_dev_state: `langgraph dev`'s checkpointer, MEMORY, whose dicts are files."""
    monkeypatch.setenv("REDIS_URI", os.environ.get("REDIS_URI", "unused"))  # read at import
    checkpoint = pytest.importorskip("langgraph_runtime_inmem.checkpoint")
    assert hasattr(checkpoint, "MEMORY")
    monkeypatch.chdir(tmp_path)
    saver = checkpoint.InMemorySaver()
    for name in ("storage", "writes", "blobs"):
        assert isinstance(getattr(saver, name), PersistentDict), name


CHECKS: dict[str, Callable[..., None]] = {
    "CONFIG_KEY_RUNTIME (with_runtime)": check_runtime_key,
    "CONFIG_KEY_CHECKPOINT_MAP (step_checkpoint)": check_checkpoint_map_key,
    "ERROR (ERROR_CHANNEL)": check_error_channel,
    "put_writes' task_path, read by signature (rewrite_writes)": check_task_path_by_signature,
    "INTERRUPT": check_interrupt_key,
    "_messages_delta_reducer (messages_delta_reducer)": check_messages_delta_reducer,
    "get_delta_channel_history (Recall)": check_delta_history_walk,
    "_unpack_ext_hook, _DeltaSnapshot, EXT_DELTA_SNAPSHOT (CachingSerializer)": (
        check_msgpack_ext_hook
    ),
    "_with_msgpack_allowlist of EncryptedSerializer (checkpoint_serializer)": (
        check_allowlist_through_the_wrapper
    ),
    "langgraph_runtime_inmem._persistence._stores (persist_dev_state)": check_dev_state_stores,
    "langgraph_runtime_inmem.checkpoint.MEMORY (persist_dev_state)": check_dev_checkpointer,
}


@pytest.mark.parametrize("name", list(CHECKS))
def test_each_internal_is_where_agentcli_finds_it(
    name: str, request: pytest.FixtureRequest
) -> None:
    check = CHECKS[name]
    wanted = check.__code__.co_varnames[: check.__code__.co_argcount]
    try:
        check(*(request.getfixturevalue(fixture) for fixture in wanted))
    except (pytest.skip.Exception, pytest.fail.Exception):
        raise
    except Exception as exc:  # an assertion, an import, a missing attribute: named
        pytest.fail(f"langgraph internal {name} moved: {type(exc).__name__}: {exc}")


# columns of each saver table that agentcli's fork SQL (langgraph_internals) names
FORK_COLUMNS = {
    "checkpoints": {"thread_id", "checkpoint_ns", "checkpoint_id", "parent_checkpoint_id"},
    "writes": {"thread_id", "checkpoint_id"},
    "checkpoint_writes": {"thread_id", "checkpoint_id"},
    "checkpoint_blobs": {"thread_id", "checkpoint_ns", "channel", "version"},
}
NOT_THREADS = {"checkpoint_migrations"}  # the saver's own bookkeeping, no thread's rows


@pytest.mark.backends
def test_the_savers_tables_are_those_a_fork_copies(database: str) -> None:
    store = open_store(Settings(db=database))
    try:
        store.saver  # noqa: B018 - the saver's tables are set up
        if database.startswith("postgres"):
            rows = store._execute(
                "SELECT table_name, column_name FROM information_schema.columns"
                " WHERE table_schema = current_schema()"
            )
        else:
            names = [
                r[0] for r in store._execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            ]
            rows = [(t, c) for t in names for c in store._columns(t)]
        columns: dict[str, set[str]] = {}
        for table, column in rows:
            if not table.startswith("agentcli_") and table not in NOT_THREADS:
                columns.setdefault(table, set()).add(column)
        tables = fork_tables(store.SAVER)
        assert set(columns) == set(tables), (
            f"langgraph internal: the {store.SAVER} saver's tables moved: {sorted(columns)},"
            f" a fork copies {sorted(tables)}"
        )
        for table in tables:
            missing = FORK_COLUMNS[table] - columns[table]
            assert not missing, f"langgraph internal: {table} lost the columns {missing}"
    finally:
        store.close()


def _private_strings() -> set[str]:
    """LangGraph's private keys and channel names (START and END are public)."""
    try:
        from langgraph._internal import _constants
    except ImportError:  # moved: the checks above say where
        return {ERROR_CHANNEL, INTERRUPT, "__pregel_runtime", "checkpoint_map"}
    values = {v for v in vars(_constants).values() if isinstance(v, str) and v.startswith("__")}
    return (values - {START, END}) | {_constants.CONFIG_KEY_CHECKPOINT_MAP}


PRIVATE_STRINGS = _private_strings()
SAVER_TABLE_SQL = re.compile(
    r"\b(FROM|JOIN|INTO|UPDATE|TABLE)\s+(checkpoints|writes|checkpoint_writes|checkpoint_blobs)\b",
    re.IGNORECASE,
)


# modules that spell a private name only as bytes to store, never to read LangGraph with:
# compression.py's dictionary is fixed whatever LangGraph does
SPELT_ONLY = {"compression.py"}


def _private_import(node: ast.AST) -> str | None:
    if isinstance(node, ast.Import):
        modules, names = [alias.name for alias in node.names], []
    elif isinstance(node, ast.ImportFrom):
        modules, names = [node.module or ""], [alias.name for alias in node.names]
    else:
        return None
    for module in modules:
        parts = module.split(".")
        if not parts[0].startswith("langgraph"):
            continue
        if (
            any(part.startswith("_") for part in parts)
            or any(name.startswith("_") for name in names)
            or module in ("langgraph.constants", "langgraph_runtime_inmem", "langgraph_api")
        ):
            return f"import of {module} {names}"
    return None


def test_no_other_module_touches_langgraphs_internals() -> None:
    found = []
    for path in sorted((ROOT / "agentcli").rglob("*.py")):
        if path.name == "langgraph_internals.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            where = f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', 0)}"
            if problem := _private_import(node):
                found.append(f"{where}: {problem}")
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                if node.value in PRIVATE_STRINGS and path.name not in SPELT_ONLY:
                    found.append(f"{where}: LangGraph's private key {node.value!r}")
                elif SAVER_TABLE_SQL.search(node.value):
                    found.append(f"{where}: SQL on the saver's tables")
    assert found == [], "use threads/langgraph_internals.py instead:\n" + "\n".join(found)


def test_the_boundary_check_sees_what_it_looks_for(tmp_path: Path) -> None:
    tree = ast.parse(
        "from langgraph._internal._constants import CONFIG_KEY_SEND\n"
        "from langgraph.graph.message import _messages_delta_reducer\n"
        "import langgraph_runtime_inmem\n"
        "from langgraph.graph import StateGraph\n"
    )
    assert [bool(_private_import(node)) for node in tree.body] == [True, True, True, False]
    assert "__interrupt__" in PRIVATE_STRINGS and "__error__" in PRIVATE_STRINGS
    assert SAVER_TABLE_SQL.search("INSERT INTO writes SELECT")
    assert not SAVER_TABLE_SQL.search("INSERT INTO agentcli_text VALUES")


# the LangGraph packages whose internals threads/langgraph_internals.py uses
CAPPED = (
    "langgraph",
    "langgraph-checkpoint",
    "langgraph-checkpoint-sqlite",
    "langgraph-checkpoint-postgres",
    "langgraph-runtime-inmem",
)


def test_each_package_whose_internals_are_used_is_capped_at_the_minor_tested() -> None:
    from importlib.metadata import version

    from packaging.requirements import Requirement
    from packaging.version import Version

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    listed = [*project["dependencies"], *sum(project["optional-dependencies"].values(), [])]
    wanted = {r.name: r for r in map(Requirement, listed) if r.name in CAPPED}
    assert set(wanted) == set(CAPPED), f"not required: {set(CAPPED) - set(wanted)}"
    for name, requirement in wanted.items():
        installed = Version(version(name))
        caps = [Version(s.version) for s in requirement.specifier if s.operator == "<"]
        assert installed in requirement.specifier, f"{name} {installed} outside {requirement}"
        next_minor = Version(f"{installed.major}.{installed.minor + 1}")
        assert caps == [next_minor], f"{requirement}: cap it below {next_minor}, the next minor"
