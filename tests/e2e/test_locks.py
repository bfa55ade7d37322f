"""One process per thread, on either backend: a second one is refused, a dead one forgotten."""

from __future__ import annotations

import json
import signal

import pexpect
import pytest

from tests.e2e.conftest import Agent
from tests.helpers.scripted_server import text
from tests.helpers.terminal import PROMPT

pytestmark = pytest.mark.backends


def started(agent: Agent) -> str:
    agent.server.push(text("Hello."))
    result = agent.run("run", "hello", "-o", "json")
    assert result.returncode == 0, result.stderr
    return str(json.loads(result.stdout)["thread_id"])


def test_a_second_process_on_a_busy_thread_exits_1_naming_it(agent: Agent) -> None:
    thread = started(agent)
    holder = agent.spawn("resume", thread)
    holder.expect(PROMPT)

    for command in (("run", "hi", "--thread", thread), ("resume", thread[:6])):
        refused = agent.run(*command)
        assert refused.returncode == 1, refused.stderr
        assert f"thread {thread} is in use by another agentcli process" in refused.stderr
        assert len(refused.stderr.splitlines()) == 1 and "Traceback" not in refused.stderr
    deleted = agent.run("threads", "delete", thread, "--yes")
    assert deleted.returncode == 1 and "in use" in deleted.stderr
    assert agent.run("threads", "show", thread).returncode == 0  # reading is fine

    holder.sendline("/exit")
    holder.expect(f"agentcli resume {thread}")
    holder.expect(pexpect.EOF)
    holder.close()
    agent.server.push(text("Hi again."))
    after = agent.run("run", "hi", "--thread", thread)
    assert after.returncode == 0, after.stderr
    assert after.stdout.strip() == "Hi again."


def test_a_holder_killed_outright_does_not_keep_the_thread(agent: Agent) -> None:
    thread = started(agent)
    holder = agent.spawn("resume", thread)
    holder.expect(PROMPT)
    holder.kill(signal.SIGKILL)  # no clean-up at all: SQLite sees a dead pid, PostgreSQL
    holder.wait()  # a closed connection
    agent.server.push(text("Still here."))
    after = agent.run("run", "are you there?", "--thread", thread)
    assert after.returncode == 0, after.stderr
    assert after.stdout.strip() == "Still here."
