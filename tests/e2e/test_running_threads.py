"""A running thread is visible and guarded from its run's first moment: `threads list` in
another process shows it `running`, a second run on it and `threads delete` are refused in
one line, `threads delete --force` stops the run and deletes it; a run killed with SIGKILL
leaves no thread `running` behind. On SQLite and on PostgreSQL."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

import pytest

from tests.e2e.conftest import Agent
from tests.helpers.scripted_server import text, tool_calls
from tests.helpers.waiting import until

pytestmark = pytest.mark.backends

WAIT_S = 120  # a condition's deadline: generous, for a machine at 5x its idle time
# until the test says; `started` tells it the call is under way (so saved with the thread)
BLOCKED = "touch started; while [ ! -e go ]; do sleep 0.05; done; echo ran >> marker"


def listed(agent: Agent) -> list[dict]:
    shown = agent.run("threads", "list", "--json")
    assert shown.returncode == 0, shown.stderr
    return list(json.loads(shown.stdout))


def blocked_run(agent: Agent) -> tuple[subprocess.Popen[str], str]:
    """`run -y` whose shell call waits for the test's `go`, and its thread, once the call
    runs (not merely asked of the model: a kill then would find no call in the thread)."""
    agent.server.push(tool_calls(("shell", {"command": BLOCKED})), text("made it"))
    run = agent.start("run", "wait for go", "-y", cold=True)  # --force stops only an agentcli
    until(lambda: (agent.workspace / "started").exists(), what="the shell call", process=run)
    return run, running_thread(agent)


def running_thread(agent: Agent) -> str:
    """The id of the one thread `threads list` shows running (waits for it)."""
    rows = until(
        what="the run's thread", predicate=lambda: [r for r in listed(agent) if r["status"]]
    )
    assert isinstance(rows, list) and len(rows) == 1
    assert rows[0]["status"] == "running", rows
    return str(rows[0]["thread_id"])


def test_a_run_is_listed_running_from_its_first_moment(agent: Agent, tmp_path: Path) -> None:
    # a tools module that loads only when the test says: the run cannot have loaded its
    # tools, nor asked the model anything, while it waits
    loaded = tmp_path / "load"
    (tmp_path / "slow_tools.py").write_text(
        f"import os, time\nwhile not os.path.exists({str(loaded)!r}):\n    time.sleep(0.05)\n"
    )
    config = tmp_path / "config.toml"
    config.write_text(f'[tools]\nmodules = ["{tmp_path / "slow_tools.py"}"]\n')
    agent.server.push(tool_calls(("shell", {"command": BLOCKED})), text("made it"))
    run = agent.start("run", "wait for go", "-y", "-o", "json", "--config", str(config))
    try:
        rows = until(what="a thread in the list", predicate=lambda: listed(agent))
        assert isinstance(rows, list) and [r["status"] for r in rows] == ["running"]
        assert agent.server.requests == [] and run.poll() is None  # still loading
        thread = rows[0]["thread_id"]
        loaded.touch()
        until(what="the shell call", predicate=lambda: agent.server.requests)
        assert [(r["thread_id"], r["status"]) for r in listed(agent)] == [(thread, "running")]
        (agent.workspace / "go").touch()
        out, err = run.communicate(timeout=WAIT_S)
        assert run.returncode == 0, err
        assert json.loads(out)["thread_id"] == thread
    finally:
        loaded.touch()
        (agent.workspace / "go").touch()
        run.kill()
    [row] = listed(agent)
    assert (row["thread_id"], row["status"], row["title"]) == (thread, "idle", "wait for go")
    assert (agent.workspace / "marker").read_text() == "ran\n"


def test_a_second_run_and_a_delete_are_refused_and_force_stops_the_run(agent: Agent) -> None:
    run, thread = blocked_run(agent)
    try:
        busy = f"thread {thread} is in use by another agentcli process (pid {run.pid} on "
        second = agent.run("run", "again", "--thread", thread)
        assert second.returncode == 1
        [error] = second.stderr.splitlines()
        assert error.startswith(f"agentcli: error: {busy}")
        refused = agent.run("threads", "delete", thread, "--yes")
        assert refused.returncode == 1
        [error] = refused.stderr.splitlines()
        assert error.startswith(f"agentcli: error: {busy}") and "--force" in error
        assert run.poll() is None and [r["thread_id"] for r in listed(agent)] == [thread]

        deleted = agent.run("threads", "delete", thread, "--yes", "--force")
        assert deleted.returncode == 0, deleted.stderr
        assert deleted.stdout == f"deleted thread {thread}\n"
        _, said = run.communicate(timeout=WAIT_S)
        assert run.returncode == 128 + signal.SIGTERM, said  # stopped, as by SIGTERM
        assert listed(agent) == []
        assert not (agent.workspace / "marker").exists()  # its command was stopped too
    finally:
        (agent.workspace / "go").touch()
        run.kill()


def test_a_run_killed_with_sigkill_leaves_no_thread_running(agent: Agent) -> None:
    run, thread = blocked_run(agent)
    try:
        run.send_signal(signal.SIGKILL)
        run.communicate(timeout=WAIT_S)
        # the lock dies with the process (its pid is gone; its connection closed), so the
        # next list reads the thread's saved state: the cut-off call waits for review
        rows = until(
            what="the thread settled",
            predicate=lambda: [r for r in listed(agent) if r["status"] != "running"],
        )
        assert isinstance(rows, list)
        assert [(r["thread_id"], r["status"]) for r in rows] == [(thread, "awaiting_approval")]
    finally:
        (agent.workspace / "go").touch()
        run.kill()


def test_a_run_that_fails_before_its_message_leaves_no_thread(agent: Agent, tmp_path: Path) -> None:
    # with a tools module the tool names are checked once the tools load: after the run
    # has claimed its thread, before its message is sent
    (tmp_path / "mytools.py").write_text("")
    config = tmp_path / "config.toml"
    config.write_text(f'[tools]\nmodules = ["{tmp_path / "mytools.py"}"]\n')
    failed = agent.run("run", "hello", "--approve", "no_such_tool", "--config", str(config))
    assert failed.returncode == 2, failed.stderr
    assert "no_such_tool" in failed.stderr
    assert listed(agent) == []
