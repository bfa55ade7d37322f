"""What another client puts into a thread on LangGraph Server is bounded (agent/input_bounds.py),
however the bytes arrive: a 5 MB reject message, a message as a string, as content parts, with
a nested JSON part or huge extra fields, an edit's arguments. Driven through langgraph-sdk
against `langgraph dev`; the thread such a client made is listed with its title and count."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk import get_sync_client
from langgraph_sdk.schema import Command

from agentcli.agent.input_bounds import MAX_EDIT_BYTES, MAX_MESSAGE_BYTES
from tests.e2e.conftest import Agent
from tests.helpers.environment import isolated_env
from tests.helpers.langgraph_dev import DevServer
from tests.helpers.scripted_server import text, tool_calls

NOTE = "[agentcli: this message was clipped to 500,000 bytes"
BIG = "é" * 2_500_000  # 5 MB of UTF-8, 2.5 M characters: a bound in characters lets 2x by


def _nested(depth: int) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = {"a": value}
    return value


# (what a client sends as its message, what the model must still get of it)
PAYLOADS: list[tuple[str, dict[str, Any], str]] = [
    ("a string", {"role": "user", "content": "hi " + BIG}, "hi éé"),
    (
        "text parts",
        {
            "role": "user",
            "content": [{"type": "text", "text": "hi"}, {"type": "text", "text": BIG}],
        },
        "hi",
    ),
    (
        "a nested JSON part",
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "hi"},
                {"type": "x", "v": _nested(200), "pad": BIG},
            ],
        },
        "hi",
    ),
    (
        "an image part",
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "hi"},
                {
                    "type": "image_url",
                    "image_url": {"url": "data:image/png;base64," + "A" * 5_000_000},
                },
            ],
        },
        "hi",
    ),
    (
        "huge extra fields",
        {"role": "user", "content": "hi", "additional_kwargs": {"k": BIG}, "name": "n" * 10_000},
        "hi",
    ),
]


def _size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False).encode())


def _sent_text(message: dict[str, Any]) -> str:
    content = message["content"]
    if isinstance(content, str):
        return content
    return "\n".join(p.get("text", "") for p in content if isinstance(p, dict))


def _run(client: Any, thread_id: str, **kwargs: Any) -> list[Any]:
    parts = list(client.runs.stream(thread_id, "agent", stream_mode=["updates"], **kwargs))
    assert not [p for p in parts if p.event == "error"], parts
    return parts


@pytest.mark.parametrize(("name", "message", "kept"), PAYLOADS, ids=[p[0] for p in PAYLOADS])
def test_a_huge_message_from_the_sdk_is_clipped(
    dev: DevServer, name: str, message: dict[str, Any], kept: str
) -> None:
    client = get_sync_client(url=dev.url, api_key=None)
    dev.model.push(text("ok"))
    thread = client.threads.create()
    _run(client, thread["thread_id"], input={"messages": [message]})
    sent = [m for m in dev.model.requests[-1]["messages"] if m["role"] == "user"][-1]
    assert _size(sent) <= MAX_MESSAGE_BYTES + 2_000, name  # what the model got
    said = _sent_text(sent)
    assert said.startswith(kept), said[:300]
    # a clipped text says so; extra fields the model never reads are dropped quietly
    assert (NOTE in said) == (name != "huge extra fields"), said[-300:]
    values = client.threads.get_state(thread["thread_id"])["values"]
    assert _size(values["messages"]) <= MAX_MESSAGE_BYTES + 10_000  # what the thread keeps


def test_a_5mb_reject_message_reaches_the_model_clipped_and_the_edit_over_the_bound_is_refused(
    dev: DevServer, tmp_path: Path
) -> None:
    client = get_sync_client(url=dev.url, api_key=None)
    dev.model.push(tool_calls(("write_file", {"path": "n.txt", "content": "draft"})))
    thread_id = client.threads.create()["thread_id"]
    _run(client, thread_id, input={"messages": [{"role": "user", "content": "save my notes"}]})
    # an edit whose arguments are over the bound: refused, the review asked again
    over = {"path": "n.txt", "content": "x" * (MAX_EDIT_BYTES + 1)}
    edit = {"type": "edit", "edited_action": {"name": "write_file", "args": over}}
    _run(client, thread_id, command=Command(resume={"decisions": [edit]}))
    state = client.threads.get_state(thread_id)
    [asked] = [i["value"] for i in state["interrupts"]]
    assert "over the 1,000,000 bytes of JSON an edit may carry" in asked["error"]
    assert not (dev.workspace / "n.txt").exists()
    # a 5 MB reason to reject: the model reads its start and the note
    dev.model.push(text("Understood."))
    reject = {"type": "reject", "message": "no: " + BIG}
    _run(client, thread_id, command=Command(resume={"decisions": [reject]}))
    told = [m for m in dev.model.requests[-1]["messages"] if m["role"] == "tool"][-1]["content"]
    assert "no: éé" in told and NOTE in told
    assert len(told.encode()) <= MAX_MESSAGE_BYTES + 2_000
    values = client.threads.get_state(thread_id)["values"]
    assert _size(values["messages"]) <= MAX_MESSAGE_BYTES + 20_000
    assert not (dev.workspace / "n.txt").exists()

    # the thread this client made is listed with its title and its number of messages
    cli = Agent(dev.model, tmp_path, isolated_env(tmp_path / "home"))
    listed = cli.run("threads", "list", "--server", dev.url, "--json")
    assert listed.returncode == 0, listed.stderr
    [row] = [r for r in json.loads(listed.stdout) if r["thread_id"] == thread_id]
    assert (row["title"], row["messages"]) == ("save my notes", len(values["messages"]))
    table = cli.run("threads", "list", "--server", dev.url).stdout
    assert "save my notes" in table and "(untitled)" not in table
