"""The next run's load answered from what the last run streamed (threads/langgraph_internals.py):
the state must be exactly what the walk over the saved writes gives."""

from __future__ import annotations

from typing import Any

import pytest

from agentcli.config import Settings
from agentcli.policy.approval_policy import Policy
from agentcli.session.local import Session
from agentcli.threads.backends import open_store
from agentcli.threads.langgraph_internals import Recall
from tests.helpers.fakes import call, say


def fresh_values(s: Session, database: str) -> dict[str, Any]:
    """The thread's state read by another store, which has nothing to recall."""
    settings = Settings(db=database)
    other = Session(settings, open_store(settings), Policy(), tools=list(s.tools.values()))
    other.thread_id = s.thread_id
    values = other.state().values
    other.store.close()
    return values


@pytest.mark.backends
def test_recalled_state_is_the_saved_state(make, database: str) -> None:
    replies = [
        call(("note", {"text": "a"})),
        say("noted"),
        say("plain answer"),
        call(("note", {"text": "b"}), ("peek", {"path": "x"})),
        say("both"),
    ]
    s = make(replies, Policy.build(allow=["note"]))
    list(s.send("first"))
    list(s.send("second"))
    events = list(s.send("third"))  # peek waits for review: a run that ends at an interrupt
    assert events[-1].status == "awaiting_approval"
    saver = s.store.saver
    assert isinstance(saver, Recall)
    latest = saver.get_tuple(s.config)
    history = saver.get_delta_channel_history(config=latest.config, channels=["messages"])
    assert history["messages"]["writes"] == []  # recalled, not walked
    assert s.state().values == fresh_values(s, database)
    done = list(
        s.decide([{"type": "edit", "edited_action": {"name": "peek", "args": {"path": "y"}}}])
    )
    assert done[-1].status == "done"
    assert s.state().values == fresh_values(s, database)
    messages = s.state().values["messages"]
    assert [m.type for m in messages].count("human") == 3 and messages[-1].content == "both"


def test_any_other_checkpoint_is_walked(make) -> None:
    s = make([say("one"), say("two")])
    list(s.send("a"))
    first = s.store.saver.get_tuple(s.config).config
    list(s.send("b"))
    saver = s.store.saver
    assert (
        saver._recalled is not None
        and saver._recalled[0][2] != first["configurable"]["checkpoint_id"]
    )
    older = [m.content for m in s.graph.get_state(first).values["messages"]]
    assert older == ["a", "one"]


@pytest.mark.backends
def test_a_run_loads_its_thread_without_a_walk(make, monkeypatch: pytest.MonkeyPatch) -> None:
    s = make(
        [say("one"), call(("note", {"text": "x"})), say("two"), say("three")],
        Policy.build(auto_approve=True),
    )
    list(s.send("a"))  # a new thread: nothing to walk yet
    walks: list[Any] = []
    base = type(s.store.saver).__bases__[1]  # SqliteSaver or PostgresSaver
    original = base.get_delta_channel_history

    def counted(self: Any, **kwargs: Any) -> Any:
        walks.append(kwargs["config"]["configurable"].get("checkpoint_id"))
        return original(self, **kwargs)

    monkeypatch.setattr(base, "get_delta_channel_history", counted)
    list(s.send("b"))
    list(s.send("c"))
    assert walks == []
    assert [m.content for m in s.state().values["messages"] if m.type != "tool"] == [
        "a",
        "one",
        "b",
        "",
        "two",
        "c",
        "three",
    ]
