"""A person's message is bounded however it is typed or piped (agent/input_bounds.py): the
CLI's own `run -` clips it, says so on stderr, and the model reads a note; a thread started
with it stays small. The LangGraph Server side: tests/e2e/test_server_bounds.py."""

from __future__ import annotations

import json

import pytest

from agentcli.agent.input_bounds import MAX_MESSAGE_BYTES
from tests.e2e.conftest import Agent
from tests.helpers.scripted_server import text

# (the message piped to `run -`, what the model must get of its start)
PAYLOADS = [
    ("a" * 5_000_000, "aaa"),
    ("é" * 2_500_000, "ééé"),  # 5 MB in 2.5 M characters: a bound in characters lets it by
    ("😀" * 1_300_000, "😀😀"),  # 4 bytes a character
    ("x" + "😀" * 200_000, "x😀"),  # the cut falls inside a character
    ('{"messages": [' * 50_000, '{"messages": ['),  # nested JSON as text: text
]


@pytest.mark.parametrize(
    ("message", "start"), PAYLOADS, ids=["ascii", "2-byte", "4-byte", "cut", "json"]
)
def test_a_huge_piped_message_is_clipped_and_the_person_told(
    agent: Agent, message: str, start: str
) -> None:
    agent.server.push(text("ok"))
    result = agent.run("run", "-", "-o", "json", stdin=message)
    assert result.returncode == 0, result.stderr
    size = len(message.encode())
    assert (
        f"agentcli: warning: the message is {size:,} bytes: only its first"
        f" {MAX_MESSAGE_BYTES:,} are sent" in result.stderr
    )
    [sent] = [m for m in agent.server.requests[0]["messages"] if m["role"] == "user"]
    got = sent["content"]
    assert got.startswith(start) and len(got.encode()) <= MAX_MESSAGE_BYTES
    assert got.endswith(
        f"clipped to {MAX_MESSAGE_BYTES:,} bytes of {size:,}: the rest was dropped]"
    )
    shown = json.loads(
        agent.run("threads", "show", json.loads(result.stdout)["thread_id"], "--json").stdout
    )
    assert len(json.dumps(shown, ensure_ascii=False).encode()) < 2 * MAX_MESSAGE_BYTES
