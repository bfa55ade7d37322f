"""Tool processes outliving agentcli (issue 13, item 8): an approved command, and whatever it
starts, must die with agentcli, whether agentcli gets SIGHUP (terminal closed), SIGTERM or
SIGKILL mid-command, and must not escape the command's end by leaving its session (setsid),
nohup, disown or a double fork. A resume never offers a call again while its first run may
still be alive: on this host it is ended first; on another host it cannot run again.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import uuid
from pathlib import Path

import pytest
from agentcli_tools.process_tree import start_time

from tests.e2e.conftest import AGENTCLI, Agent
from tests.helpers.scripted_server import text, tool_calls
from tests.helpers.waiting import running, until

# (name, command template): {f} is the file the escaped process would write, {m} a marker.
# An escaped process waits far longer than any test (LATER) before it writes: so it is still
# there, marked, when the test looks, however slow the machine; none can end by itself first
LATER = "sleep 300"
STOPPED = "until [ \"$(cut -d' ' -f3 /proc/$!/stat)\" = T ]; do sleep 0.01; done"  # $! stopped
PAYLOADS_ESCAPE = [
    ("background", f"sh -c '{LATER}; echo x > {{f}}; : {{m}}' & echo started"),
    ("setsid", f"setsid -f sh -c '{LATER}; echo x > {{f}}; : {{m}}'; echo started"),
    ("nohup", f"nohup sh -c '{LATER}; echo x > {{f}}; : {{m}}' >/dev/null 2>&1 & echo started"),
    ("disown", f"sh -c '{LATER}; echo x > {{f}}; : {{m}}' & disown; echo started"),
    ("double-fork", f"(sh -c '{LATER}; echo x > {{f}}; : {{m}}' &); echo started"),
    ("setsid-double", f"( setsid sh -c '{LATER}; echo x > {{f}}; : {{m}}' & ) ; echo started"),
    ("stopped", f"sh -c 'kill -STOP $$; echo x > {{f}}; : {{m}}' & {STOPPED}; echo started"),
    (
        "ignores-term",
        f"setsid -f sh -c 'trap \"\" TERM HUP; {LATER}; echo x > {{f}}; : {{m}}'; echo ok",
    ),
]
PAYLOADS_SIGNAL = [signal.SIGHUP, signal.SIGTERM, signal.SIGKILL]


def _marked(marker: str) -> list[int]:
    """Processes whose command line holds ``marker`` (this test's, nobody else's)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes()
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if marker.encode() in cmdline and state != "Z":
                found.append(int(entry.name))
    return found


@pytest.mark.parametrize(("name", "template"), PAYLOADS_ESCAPE, ids=[p[0] for p in PAYLOADS_ESCAPE])
def test_nothing_a_command_started_outlives_it(agent: Agent, name: str, template: str) -> None:
    marker = f"agentcli-test-{uuid.uuid4().hex}"
    target = agent.workspace / "escaped.txt"
    command = template.format(f=target, m=marker)
    agent.server.push(tool_calls(("shell", {"command": command})), text("done"))
    try:
        result = agent.run("run", "go", "-y", "-o", "json")
        assert result.returncode == 0, result.stderr
        assert json.loads(result.stdout)["status"] == "done"
        tool_result = agent.server.requests[1]["messages"][-1]["content"]
        assert tool_result.startswith("exit code 0")
        assert _marked(marker) == [], f"{name}: a process escaped"  # stopped with the call
        assert not target.exists()
    finally:
        _clean_up(marker, ())


@pytest.mark.parametrize("signum", PAYLOADS_SIGNAL, ids=[s.name for s in PAYLOADS_SIGNAL])
def test_a_running_command_dies_with_agentcli(agent: Agent, signum: signal.Signals) -> None:
    marker = f"agentcli-test-{uuid.uuid4().hex}"
    finished = agent.workspace / "finished.txt"
    escaped = agent.workspace / "escaped.txt"
    command = (
        f"setsid -f sh -c '{LATER}; echo x > {escaped}; : {marker}'; "
        f"{LATER}; echo finished > {finished}; : {marker}"
    )
    agent.server.push(tool_calls(("shell", {"command": command})), text("done"))
    process = _run_go(agent, subprocess.PIPE)
    try:
        until(lambda: len(_marked(marker)) >= 2, what="the command started", process=process)
        process.send_signal(signum)
        process.wait(timeout=120)
        expected = -signal.SIGKILL if signum == signal.SIGKILL else 128 + signum
        assert process.returncode == expected
        # the processes sleep for minutes: gone before then, they were stopped
        until(lambda: not _marked(marker), what="the tool processes died with agentcli")
        assert not finished.exists() and not escaped.exists()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        _clean_up(marker, ())
    # the thread is resumable, and the cut call is offered for review again, never re-run
    # silently (a policy cannot approve a call that may have partly run)
    thread_id = json.loads(agent.run("threads", "list", "--json").stdout)[0]["thread_id"]
    again = agent.run("run", "--thread", thread_id, "-y", "-o", "json")
    shown = agent.run("threads", "show", thread_id).stdout
    assert again.returncode == 3, (again.stderr, shown, len(agent.server.requests))
    assert json.loads(again.stdout)["status"] == "awaiting_approval"
    assert not finished.exists()


def test_a_command_that_ends_normally_keeps_its_output_and_code(agent: Agent) -> None:
    """Legitimate use under the supervisor: output, exit code, a background job that ends
    before the command does, and a job the command waits for."""
    command = "echo out; echo err >&2; (sleep 0.2; echo bg) & wait; exit 4"  # waited for
    agent.server.push(tool_calls(("shell", {"command": command})), text("done"))
    assert agent.run("run", "go", "-y").returncode == 0
    assert agent.server.requests[1]["messages"][-1]["content"] == "exit code 4\nout\nerr\nbg\n"


def test_a_command_that_kills_its_own_group_does_not_take_the_supervisor(agent: Agent) -> None:
    """`kill 0` (as in `trap 'kill 0' EXIT`) signals the command's group: the supervisor is
    not in it, so it still reports, and still stops what the command left behind."""
    marker = f"agentcli-test-{uuid.uuid4().hex}"
    target = agent.workspace / "escaped.txt"
    command = f"setsid -f sh -c '{LATER}; echo x > {target}; : {marker}'; echo hi; kill -9 0"
    agent.server.push(tool_calls(("shell", {"command": command})), text("done"))
    try:
        assert agent.run("run", "go", "-y").returncode == 0
        result = agent.server.requests[1]["messages"][-1]["content"]
        assert result.startswith("exit code -9") and "hi" in result
        assert _marked(marker) == [] and not target.exists()  # stopped with the call
    finally:
        _clean_up(marker, ())


def _run_go(agent: Agent, output: int) -> subprocess.Popen[bytes]:
    """`agentcli run go -y` started in the workspace, its output to ``output``."""
    return subprocess.Popen(
        [AGENTCLI, "run", "go", "-y", "-o", "json"],
        env=agent.env,
        cwd=agent.workspace,
        stdin=subprocess.DEVNULL,
        stdout=output,
        stderr=output,
    )


def _first_run(agent: Agent, marker: str) -> tuple[subprocess.Popen[bytes], tuple[int, int]]:
    """agentcli running a shell call whose tree holds ``marker``, and (the call supervisor's
    pid, the supervisor's) as the journal recorded them before the command started."""
    command = f"echo x >> ran.log; sh -c '{LATER}; : {marker}' & [ -e go ] || {LATER}; : {marker}"
    agent.server.push(tool_calls(("shell", {"command": command})), text("done"))
    process = _run_go(agent, subprocess.DEVNULL)
    until(lambda: len(_marked(marker)) >= 2, what="the command started", process=process)
    store = agent.store()
    try:
        (row,) = store._execute("SELECT state, host, pid, pid_started FROM agentcli_calls")
    finally:
        store.close()
    state, host, pid, started = row
    assert (state, host) == ("started", socket.gethostname())
    assert start_time(pid) == started  # the journal names the live call supervisor
    return process, (pid, _parent(pid))


def _stat(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return ["X"]


def _parent(pid: int) -> int:
    return int(_stat(pid)[1])


def _survive(process: subprocess.Popen[bytes], supervisors: tuple[int, int]) -> None:
    """Kill agentcli while its supervisors cannot act (stopped): as if they outlived it."""
    for pid in reversed(supervisors):
        os.kill(pid, signal.SIGSTOP)
    process.kill()
    process.wait()


def _clean_up(marker: str, supervisors: tuple[int, int]) -> None:
    for pid in [*supervisors, *_marked(marker)]:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def test_a_resume_ends_a_first_run_still_alive_before_offering_it(agent: Agent) -> None:
    marker = f"agentcli-test-{uuid.uuid4().hex}"
    process, supervisors = _first_run(agent, marker)
    try:
        _survive(process, supervisors)
        assert len(_marked(marker)) >= 2  # the first run outlived agentcli
        thread_id = json.loads(agent.run("threads", "list", "--json").stdout)[0]["thread_id"]
        again = agent.run("run", "--thread", thread_id, "-y", "-o", "json")
        assert again.returncode == 3, again.stderr
        (pending,) = json.loads(again.stdout)["pending"]
        assert pending["rerun"] == "started"
        # offered only once the first run and all it started are gone
        assert _marked(marker) == [] and not running(supervisors[0])
        assert (agent.workspace / "ran.log").read_text() == "x\n"
        (agent.workspace / "go").touch()
        agent.server.push(text("ran again"))
        assert agent.run("review", thread_id, "--approve", "all").returncode == 0
        assert (agent.workspace / "ran.log").read_text() == "x\nx\n"  # legitimate re-run
    finally:
        _clean_up(marker, supervisors)


def test_a_first_run_on_another_host_cannot_run_again(agent: Agent) -> None:
    marker = f"agentcli-test-{uuid.uuid4().hex}"
    process, supervisors = _first_run(agent, marker)
    try:
        _survive(process, supervisors)
        store = agent.store()
        try:
            store._execute("UPDATE agentcli_calls SET host = 'build-box.example'")
        finally:
            store.close()
        thread_id = json.loads(agent.run("threads", "list", "--json").stdout)[0]["thread_id"]
        again = agent.run("run", "--thread", thread_id, "-y", "-o", "json")
        assert again.returncode == 3, again.stderr
        (pending,) = json.loads(again.stdout)["pending"]
        assert pending["rerun"] == "elsewhere"
        assert "build-box.example" in agent.run("review", thread_id).stdout
        refused = agent.run("review", thread_id, "--approve", "all")
        assert refused.returncode != 0
        assert (agent.workspace / "ran.log").read_text() == "x\n"  # not run again
        assert _marked(marker)  # another host's process: not this host's to kill
        agent.server.push(text("fine"))
        done = agent.run("review", thread_id, "--done", pending["call_id"])
        assert done.returncode == 0, done.stderr
        assert (agent.workspace / "ran.log").read_text() == "x\n"
    finally:
        _clean_up(marker, supervisors)


def test_a_command_that_kills_its_call_supervisor_leaves_nothing(agent: Agent) -> None:
    """`kill -9 $PPID` kills the call supervisor: what the command started is re-parented
    to the process's supervisor, which kills it at once, while agentcli still runs (the
    next call looks for it); agentcli reports the call as killed."""
    head, tail = "agentcli-test-", uuid.uuid4().hex
    marker = head + tail
    target = agent.workspace / "escaped.txt"
    command = (
        f"setsid -f sh -c '{LATER}; echo x >> {target}; : {marker}'; "
        f"sh -c '{LATER}; echo y >> {target}; : {marker}' & echo hi; kill -9 $PPID; {LATER}"
    )
    # a regular expression that matches the marker, not itself: no process of the check
    # counts as an escaped one. The next call waits (a minute at most) until none is left:
    # they sleep for minutes, so none is gone unless it was killed
    count = f"grep -las '{head}[x]*{tail}' /proc/[0-9]*/cmdline | wc -l"
    look = f'for i in $(seq 600); do [ "$({count})" = 0 ] && break; sleep 0.1; done; {count}'
    agent.server.push(
        tool_calls(("shell", {"command": command})),
        tool_calls(("shell", {"command": look})),
        text("done"),
    )
    try:
        assert agent.run("run", "go", "-y").returncode == 0
        result = agent.server.requests[1]["messages"][-1]["content"]
        assert result.startswith("exit code -9") and "hi" in result
        assert agent.server.requests[2]["messages"][-1]["content"] == "exit code 0\n0\n"
        assert not target.exists() and _marked(marker) == []
    finally:
        _clean_up(marker, ())
