"""The graph langgraph.json exports: uncompiled, and a run context any client can start."""

from __future__ import annotations

import gc
import importlib
import json
import os
import sqlite3
import threading
import weakref
from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver, PersistentDict
from langgraph.graph import StateGraph
from langgraph.types import Command

from agentcli.agent.agent_graph import build_graph
from agentcli.config import Settings
from agentcli.server.graph import context_schema
from agentcli.server.server_journal import ServerJournal
from agentcli.threads.langgraph_internals import persist_dev_state
from tests.helpers import ROOT
from tests.helpers.fakes import FakeChatModel, call, say
from tests.unit.conftest import note

RULES = [{"tool": "shell", "match": "ls*", "decision": "allow"}]


def test_langgraph_json_points_at_an_uncompiled_graph_with_a_json_context_schema() -> None:
    config = json.loads((ROOT / "langgraph.json").read_text())
    module, _, name = config["graphs"]["agent"].partition(":")
    assert module == "agentcli.server.graph"
    graph = getattr(importlib.import_module(module), name)
    assert isinstance(graph, StateGraph)  # the server compiles it with its own checkpointer
    schema = graph.compile().get_context_jsonschema()  # the server filters context with it
    assert schema is not None and {"workspace", "approval"} <= set(schema["properties"])


def test_no_context_means_the_server_workspace_settings_and_rules(tmp_path: Path) -> None:
    settings = Settings(deny=["fetch_url"], rules=RULES, max_steps=7, shell_timeout=9.0)
    context = context_schema(settings, tmp_path)()
    assert context.workspace == tmp_path.resolve()
    assert (context.max_steps, context.shell_timeout) == (7, 9.0)
    assert context.policy.decide("fetch_url", {}).decision == "deny"
    assert context.policy.decide("shell", {"command": "ls -l"}).decision == "allow"
    assert context.policy.decide("shell", {"command": "rm x"}).decision == "ask"


def test_a_client_chooses_a_folder_inside_the_server_workspace_only(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    context = context_schema(Settings(), tmp_path)
    assert context(workspace="sub").workspace == tmp_path.resolve() / "sub"
    assert context(workspace=str(tmp_path / "sub")).workspace == tmp_path.resolve() / "sub"
    for outside in ("..", "/", "sub/../.."):
        with pytest.raises(ValueError, match="outside the server's workspace"):
            context(workspace=outside)
    with pytest.raises(ValueError, match="not a directory"):
        context(workspace="missing")


def test_client_flags_go_on_top_of_the_rules_but_limits_stay_the_servers(
    tmp_path: Path,
) -> None:
    context = context_schema(Settings(deny=["fetch_url"], max_steps=5), tmp_path)
    flags = context(approval={"auto_approve": True, "deny": ["shell"]})
    assert flags.policy.decide("write_file", {}).by == "flag --auto-approve"
    assert flags.policy.decide("shell", {}).by == "flag --deny"
    assert flags.policy.decide("fetch_url", {}).by == "config approval.deny"
    loose = context(max_steps=999, allow_private_urls=True, system_prompt="obey")
    assert (loose.max_steps, loose.allow_private_urls, loose.system_prompt) == (5, False, None)
    for bad in ({"auto_approve": "yes"}, {"approve": "shell"}, {"sudo": True}, {"mode": "yolo"}):
        with pytest.raises(ValueError, match="approval"):
            context(approval=bad)


def test_a_client_chooses_the_mode_within_the_servers_sandbox(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a")
    read = context_schema(Settings(), tmp_path)(approval={"mode": "read"})
    verdict = read.policy.decide("read_file", {"path": "a.txt"}, workspace=tmp_path)
    assert verdict.by == "mode read (a read inside the workspace)"
    unconfined = context_schema(Settings(sandbox_mode="off"), tmp_path)(approval={"mode": "auto"})
    shell = unconfined.policy.decide("shell", {"command": "ls"}, workspace=tmp_path)
    assert shell.decision == "ask"  # the server's sandbox is off: no mode runs a command


def test_a_run_with_an_empty_context_stops_at_a_v1_review(tmp_path: Path) -> None:
    model = FakeChatModel(replies=[call(("note", {"text": "hi"})), say("noted")], calls=[])
    schema = context_schema(Settings(), tmp_path)
    graph = build_graph(lambda: model, [note], schema).compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    graph.invoke({"messages": [("user", "note hi")]}, config, context={})
    [pending] = graph.get_state(config).interrupts
    assert [r["name"] for r in pending.value["action_requests"]] == ["note"]
    assert pending.value["review_configs"][0]["allowed_decisions"] == ["approve", "edit", "reject"]
    edit = {"type": "edit", "edited_action": {"name": "note", "args": {"text": "bye"}}}
    graph.invoke(Command(resume={"decisions": [edit]}), config, context={})
    messages = graph.get_state(config).values["messages"]
    assert messages[-2].content == "noted 'bye' x1" and messages[-1].content == "noted"


def test_every_run_journals_its_tool_calls_in_the_servers_store(tmp_path: Path) -> None:
    """The journal is the one `storage.db` names, whatever a client's context says."""
    db = tmp_path / "server.db"
    schema = context_schema(Settings(db=str(db)), tmp_path)
    first, second = schema(), schema(journal="client's own")
    assert first.journal is second.journal and not db.exists()  # opened by a tool call
    model = FakeChatModel(replies=[call(("note", {"text": "hi"})), say("noted")], calls=[])
    graph = build_graph(lambda: model, [note], schema).compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    context = {"approval": {"auto_approve": True}}
    graph.invoke({"messages": [("user", "note hi")]}, config, context=context)
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT thread_id, call_id, state FROM agentcli_calls").fetchall()
    [(thread, key, state)] = rows
    assert (thread, state) == ("t", "finished") and " tools:" in key


def test_the_dev_runtimes_state_is_written_out_before_a_call_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """langgraph dev's in-memory dicts reach their files at once, not at its 10 s flush."""
    from langgraph_runtime_inmem import _persistence

    _persistence._stores.clear()  # importing the runtime registered its store in this folder
    ops = PersistentDict(dict, filename=str(tmp_path / ".langgraph_ops.pckl"))
    ops["runs"] = [{"status": "running"}]
    monkeypatch.setattr(_persistence, "_stores", {ops.filename: weakref.ref(ops)})
    journal = ServerJournal(Settings(db=str(tmp_path / "journal.db")))
    journal.call_started("t", "call_1 tools:x")
    saved = PersistentDict(dict, filename=ops.filename)
    saved.load()
    assert saved == {"runs": [{"status": "running"}]}
    assert journal.call_state("t", "call_1 tools:x") == "started"
    assert not list(tmp_path.glob("*.tmp"))
    monkeypatch.setattr(_persistence, "_stores", {})  # any other runtime: nothing to write
    assert persist_dev_state() == 0


def test_the_dev_runtimes_checkpoints_are_written_though_its_registry_lost_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each checkpointer the API asks `langgraph dev` for with an unpack hook registers a
    throwaway saver's dicts under the checkpointer's file names, then gives that saver the
    runtime's own: its registry then holds stale copies, dead once collected, and neither its
    10 s flush nor the journal's write wrote a checkpoint (a crash then lost the model's
    answer to a call that had started). The journal's write puts the runtime's own back."""
    monkeypatch.setenv("REDIS_URI", os.environ.get("REDIS_URI", "unused"))  # read at import
    from langgraph_runtime_inmem import _persistence, checkpoint

    monkeypatch.chdir(tmp_path)  # the runtime names its files relative to its folder
    monkeypatch.setattr(_persistence, "_stores", {})
    monkeypatch.setattr(_persistence, "_flush_thread", (threading.Event(), None))  # no flush
    memory = checkpoint.InMemorySaver(__persistence_hook__=_persistence.register_persistent_dict)
    monkeypatch.setattr(checkpoint, "MEMORY", memory)
    checkpoint.Checkpointer(unpack_hook=lambda code, data: data)  # as the API asks, per run
    gc.collect()
    assert not any(ref() is memory.storage for ref in _persistence._stores.values())
    memory.storage["t"] = {"": {"c1": ("the model's answer", b"call_1")}}
    assert persist_dev_state() >= 3
    saved = PersistentDict(dict, filename=memory.storage.filename)
    saved.load()
    assert saved == {"t": {"": {"c1": ("the model's answer", b"call_1")}}}
    assert _persistence._stores[memory.storage.filename]() is memory.storage  # flushed too


def test_the_servers_journal_answers_everything_the_tools_node_asks() -> None:
    """ServerJournal stands in for the store's journal: every CallJournal method is there."""
    from agentcli.server.server_journal import ServerJournal
    from agentcli.threads.call_journal import CallJournal

    wanted = [name for name in vars(CallJournal) if not name.startswith("_")]
    assert wanted and all(callable(getattr(ServerJournal, name, None)) for name in wanted)
