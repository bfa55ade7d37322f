"""Many processes on one SQLite file, each on its own thread: no "database is locked"."""

from __future__ import annotations

import json

from tests.e2e.conftest import Agent
from tests.helpers.scripted_server import Reply, text, tool_calls

PROCESSES = 8


def test_parallel_processes_on_one_database(agent: Agent) -> None:
    def respond(body: dict) -> Reply:
        """Each process's own turn, whatever order the eight ask in: a call, then (its
        result being the last message) the answer. From one shared queue, a process could
        take another's call and be stopped for repeating it (agent.max_repeated_calls)."""
        last = body["messages"][-1]
        return text("answered") if last["role"] == "tool" else tool_calls(("list_dir", {}))

    agent.server.responders.append(respond)
    children = [agent.start("run", f"question {i}", "-y", "-o", "json") for i in range(PROCESSES)]
    results = [child.communicate(timeout=120) for child in children]
    for child, (out, err) in zip(children, results, strict=True):
        assert child.returncode == 0, err
        assert "locked" not in err
        assert json.loads(out)["status"] == "done"
    threads = json.loads(agent.run("threads", "list", "--json").stdout)
    assert len(threads) == PROCESSES and {t["status"] for t in threads} == {"idle"}
