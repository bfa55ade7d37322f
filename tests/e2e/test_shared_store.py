"""One store, two data folders (two people, or two machines, on one PostgreSQL database or one
shared SQLite file): a call parked from one is decided from the other, because the key that
seals approvals is the store's; a decision that is refused never exits 0; the same decision
sent by two processes at once runs the call once and both exit 0."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import AGENTCLI, Agent
from tests.helpers.scripted_server import text, tool_calls
from tests.helpers.warm_run import warm_popen, warm_run

pytestmark = pytest.mark.backends  # each test on SQLite and on PostgreSQL

WAIT_S = 120  # a condition's deadline: generous, for a machine at 5x its idle time


def on_one_store(agent: Agent, tmp_path: Path) -> dict[str, str]:
    """Point `agent` at a shared store, and give a second person (a data folder, a home
    and a config of their own) the same store: their environment."""
    if "AGENTCLI_DB" not in agent.env:  # SQLite: one file, outside both data folders
        agent.env["AGENTCLI_DB"] = str(tmp_path / "shared" / "threads.db")
    home = tmp_path / "other-home"
    other = {
        **agent.env,
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_DATA_HOME": str(home / "data"),
    }
    assert other["XDG_DATA_HOME"] != agent.env["XDG_DATA_HOME"]
    return other


def run_as(agent: Agent, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    argv = [AGENTCLI, *args]
    return warm_run(argv, env=env, cwd=agent.workspace, stdin="", timeout=WAIT_S)


def start_as(agent: Agent, env: dict[str, str], *args: str) -> Any:
    return warm_popen([AGENTCLI, *args], env=env, cwd=agent.workspace)


def park(agent: Agent, command: str) -> str:
    """A shell call parked for review from the first data folder: its thread id."""
    return parked(agent, command)[0]


def parked(agent: Agent, command: str) -> tuple[str, str]:
    """A shell call parked for review from the first data folder: its thread id, and the
    call as review names it (CALL_ID@DIGEST)."""
    agent.server.push(tool_calls(("shell", {"command": command})), text("made it"))
    result = agent.run("run", "make a marker", "-o", "json")
    assert result.returncode == 3, result.stderr
    report = json.loads(result.stdout)
    [call] = report["pending"]
    return str(report["thread_id"]), f"{call['call_id']}@{call['digest']}"


def test_a_call_parked_from_one_data_folder_is_approved_from_another(
    agent: Agent, tmp_path: Path
) -> None:
    other = on_one_store(agent, tmp_path)
    thread = park(agent, "echo ran >> marker")
    decided = run_as(agent, other, "review", thread, "--approve", "all", "-o", "json")
    assert decided.returncode == 0, decided.stderr
    assert json.loads(decided.stdout)["status"] == "done"
    assert (agent.workspace / "marker").read_text() == "ran\n"
    assert "changed from outside" not in decided.stdout + decided.stderr
    for env in (agent.env, other):  # one chain, one key: whole from either folder
        verified = run_as(agent, env, "audit", "verify", "--thread", thread)
        assert verified.returncode == 0, verified.stdout + verified.stderr
    assert not (Path(other["XDG_DATA_HOME"]) / "agentcli" / "approval.key").exists()


def test_a_refused_decision_never_exits_0(agent: Agent, tmp_path: Path) -> None:
    other = on_one_store(agent, tmp_path)
    thread = park(agent, "echo ran >> marker")
    store = agent.store()  # the key the review was sealed with is gone: a new one
    store._execute("UPDATE agentcli_secrets SET secret = ?", ("ab" * 32,))
    store.close()
    decided = run_as(agent, other, "review", thread, "--approve", "all", "-o", "json")
    assert decided.returncode == 1, decided.stdout + decided.stderr
    assert not (agent.workspace / "marker").exists()
    [error] = decided.stderr.splitlines()
    assert error.startswith("agentcli: error: the decision for call ")
    assert "was refused and the call did not run" in error and thread in error
    assert json.loads(decided.stdout)["status"] == "error"


@pytest.mark.parametrize("named", ["all of the thread", "the call, in the inbox"])
def test_the_same_decision_sent_twice_at_once_runs_the_call_once(
    agent: Agent, tmp_path: Path, named: str
) -> None:
    other = on_one_store(agent, tmp_path)
    go = agent.workspace / "go"
    # the call holds its thread until the test lets it go: whichever decision comes
    # second finds the thread taken, its call decided already
    thread, call = parked(agent, "while [ ! -e go ]; do sleep 0.05; done; echo ran >> marker")
    agent.server.push(text("made it"))  # each decision's run may ask the model once
    decision = [thread, "--approve", "all"] if named.startswith("all") else ["--approve", call]
    reviews = [start_as(agent, env, "review", *decision) for env in (agent.env, other)]
    try:
        deadline = time.monotonic() + WAIT_S
        while all(review.poll() is None for review in reviews):
            assert time.monotonic() < deadline, "neither review ended while the call ran"
            time.sleep(0.05)
        [first] = [review for review in reviews if review.poll() is not None]
        out, err = first.communicate()
        assert first.returncode == 0, err
        decided = f"of thread {thread} was already decided: approved" in err
        # `all` is the calls waiting when it looked: none, if it looked once the other had
        # taken them (the thread held, its call running)
        empty = named.startswith("all") and "has no calls awaiting review; nothing changed" in err
        assert decided or empty, err
        assert not (agent.workspace / "marker").exists()  # the other one still runs it
        go.touch()
        [second] = [review for review in reviews if review is not first]
        out, err = second.communicate(timeout=WAIT_S)
        assert second.returncode == 0, err
    finally:
        go.touch()
        for review in reviews:
            review.kill()
    assert (agent.workspace / "marker").read_text() == "ran\n"
