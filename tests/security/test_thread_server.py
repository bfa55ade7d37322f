"""The person's API key never goes to a model server read from the thread store.

A thread records the server it runs on, and commands that continue it use that server
(session/thread_origin.py). The store may be shared (PostgreSQL) and written by another
client, which can point a thread at a server of its own. With a key configured, a recorded
server that is not the very URL the person's settings name is refused, in one line naming
--base-url, before any request and before any decided call runs. Each payload is a recorded
URL an attacker might hope passes for the person's own.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.e2e.conftest import Agent
from tests.helpers.scripted_server import ScriptedServer, text, tool_calls
from tests.helpers.terminal import one_line

KEY = "sk-person-own-key-5150"

# {own}: the configured server's URL ("http://127.0.0.1:PORT/v1"); {evil}: the attacker's;
# {evil_port}: its port
PAYLOADS = [
    "{evil}",
    "http://127.0.0.1:{own_port}@127.0.0.1:{evil_port}/v1",  # the own URL as a user name
    "http://user:{own_port}@127.0.0.1:{evil_port}/v1",
    "HTTP://127.0.0.1:{evil_port}/v1",
    "http://localhost:{evil_port}/v1",
    "http://127.0.0.1:{evil_port}/v1/",
    "{own}/../../v1@127.0.0.1:{evil_port}",
    "{own}#@127.0.0.1:{evil_port}",
    "{own}?x=@127.0.0.1:{evil_port}",
    "http://127.0.0.1:{evil_port}/v1 {own}",
    "http://127.0.0.1:{evil_port}/v1\n{own}",
    "http://[::ffff:127.0.0.1]:{evil_port}/v1",
]


@pytest.fixture
def evil() -> Iterator[ScriptedServer]:
    with ScriptedServer() as scripted:
        yield scripted


def parked_thread(agent: Agent) -> str:
    """A thread on the person's own server, with their key, a shell call awaiting review."""
    agent.server.require_key = KEY
    agent.env["OPENAI_API_KEY"] = KEY
    agent.server.push(tool_calls(("shell", {"command": "printf ran > ran.txt"})))
    parked = agent.run("run", "make ran.txt", "-o", "json")
    assert parked.returncode == 3, parked.stderr
    return str(json.loads(parked.stdout)["thread_id"])


def point_at(agent: Agent, thread: str, url: str) -> None:
    """What another client of the store can do: write the thread's recorded server."""
    store = agent.store()
    try:
        store.update(thread, base_url=url)
    finally:
        store.close()


def payload(template: str, agent: Agent, evil: ScriptedServer) -> str:
    own = agent.server.base_url
    return template.format(
        own=own, evil=evil.base_url, own_port=agent.server.port, evil_port=evil.port
    )


@pytest.mark.parametrize("template", PAYLOADS)
def test_a_recorded_server_never_gets_the_key(
    agent: Agent, evil: ScriptedServer, template: str
) -> None:
    thread = parked_thread(agent)
    asked = len(agent.server.requests)
    point_at(agent, thread, payload(template, agent, evil))
    evil.push(text("Thanks for the key."), text("Thanks for the key."))
    refused = agent.run("review", thread, "--approve", "all")
    assert refused.returncode == 2, refused.stderr
    said = one_line(refused.stderr)
    assert "--base-url" in said and "your API key goes only to servers you name" in said
    assert evil.requests == [] and evil.connections == 0
    assert len(agent.server.requests) == asked  # and not sent to the person's server either
    assert not (agent.workspace / "ran.txt").exists()  # the decided call did not run
    [waiting] = json.loads(agent.run("review", thread, "--json").stdout)
    assert waiting["tool"] == "shell"  # still awaiting review: nothing was decided


def test_every_command_that_continues_the_thread_refuses_it(
    agent: Agent, evil: ScriptedServer
) -> None:
    thread = parked_thread(agent)
    point_at(agent, thread, evil.base_url)
    for args in (["run", "--thread", thread], ["run", "--last"], ["resume", thread]):
        refused = agent.run(*args)
        assert refused.returncode == 2, (args, refused.stderr)
        assert "--base-url" in one_line(refused.stderr), args
    assert evil.requests == [] and evil.connections == 0
    assert not (agent.workspace / "ran.txt").exists()

    # the person's own flag decides: to their server (the record follows), ...
    agent.server.push(text("Made."))
    mine = agent.run("review", thread, "--approve", "all", "--base-url", agent.server.base_url)
    assert mine.returncode == 0, mine.stderr
    assert (agent.workspace / "ran.txt").exists()
    assert agent.server.headers[-1]["authorization"] == f"Bearer {KEY}"
    agent.server.push(text("Again."))
    assert agent.run("run", "--thread", thread, "again").returncode == 0
    assert evil.requests == []


def test_with_no_key_the_recorded_server_is_used_and_nothing_secret_goes(
    agent: Agent, evil: ScriptedServer
) -> None:
    """No key configured: nothing to leak, so a thread on a local server continues on it
    without flags (what a shared store's writer could do with the checkpoints anyway)."""
    agent.server.push(tool_calls(("list_dir", {"path": "."})))
    parked = agent.run("run", "list", "-o", "json")
    assert parked.returncode == 3, parked.stderr
    thread = json.loads(parked.stdout)["thread_id"]
    point_at(agent, thread, evil.base_url)
    evil.push(text("Listed."))
    done = agent.run("review", thread, "--approve", "all")
    assert done.returncode == 0, done.stderr
    assert len(evil.requests) == 1
    assert KEY not in json.dumps(evil.headers)
