"""Being told: `[notify] command` when a run parks, and the bell and desktop notification
when a review in chat has waited `[notify] after` seconds."""

from __future__ import annotations

import io
import json
import os
import shlex
from pathlib import Path

import pexpect

from agentcli.session.call_digests import digest
from tests.e2e.conftest import Agent
from tests.helpers.scripted_server import text, tool_calls
from tests.helpers.terminal import CHOICE, PROMPT
from tests.helpers.waiting import until

SECRET = "sk-test-notify-secret-4711"


def config(agent: Agent, command: str, **more: float) -> str:
    path = agent.workspace.parent / "notify.toml"
    lines = ["[notify]", f"command = {json.dumps(command)}"]
    lines += [f"{key} = {value}" for key, value in more.items()]
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def test_a_parked_run_runs_the_notify_command_with_the_pending_calls(
    agent: Agent, tmp_path: Path
) -> None:
    told, env = tmp_path / "told.json", tmp_path / "env.txt"
    command = f"cat > {shlex.quote(str(told))}; env > {shlex.quote(str(env))}"
    agent.env.update(OPENAI_API_KEY=SECRET, NTFY_TOKEN="mine", ALSO_THE_KEY=SECRET)
    args = {"command": "echo \x1b]0;x\x07 > out.txt"}  # the model's, exactly as it sent it
    agent.server.push(tool_calls(("shell", args)))
    parked = agent.run("run", "make out.txt", "-o", "json", "--config", config(agent, command))
    assert parked.returncode == 3, parked.stderr
    assert "warning" not in parked.stderr
    thread_id = json.loads(parked.stdout)["thread_id"]
    document = json.loads(told.read_text())
    assert document["event"] == "awaiting_approval"
    assert document["thread_id"] == thread_id
    assert document["workspace"] == str(agent.workspace)
    assert document["title"] == "make out.txt"
    assert document["resume"] == f"agentcli review {thread_id}"
    [call] = document["pending"]
    assert (call["call_id"], call["tool"], call["args"]) == ("call_1", "shell", args)
    assert call["waiting_since"].endswith("+00:00")
    [listed] = json.loads(parked.stdout)["pending"]  # named as `review` names it
    assert call["digest"] == listed["digest"] and len(call["digest"]) >= 8
    seen = dict(line.split("=", 1) for line in env.read_text().splitlines() if "=" in line)
    assert "OPENAI_API_KEY" not in seen and SECRET not in env.read_text()
    assert not [name for name in seen if name.startswith("AGENTCLI_")]
    assert seen["NTFY_TOKEN"] == "mine"  # the person's own: their webhook may need it

    told.unlink()
    again = agent.run("run", "--thread", thread_id, "--config", config(agent, command))
    assert again.returncode == 3, again.stderr
    [call] = json.loads(told.read_text())["pending"]  # parked again: told again
    assert call["call_id"] == "call_1"


def test_a_failing_notify_command_is_one_warning_and_the_run_still_parks(agent: Agent) -> None:
    agent.server.push(tool_calls(("shell", {"command": "true"})))
    failing = config(agent, "cat > /dev/null; echo 'no route to ntfy' >&2; exit 1")
    parked = agent.run("run", "go", "--config", failing)
    assert parked.returncode == 3, parked.stderr
    warnings = [line for line in parked.stderr.splitlines() if "warning" in line]
    assert warnings == ["agentcli: warning: notify command exited with status 1: no route to ntfy"]


def test_a_slow_notify_command_is_stopped_after_its_timeout(agent: Agent, tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    slow = config(agent, f"sleep 300 & echo $! > {shlex.quote(str(pid_file))}; wait", timeout=2)
    agent.server.push(tool_calls(("shell", {"command": "true"})))
    parked = agent.run("run", "go", "--config", slow)  # fails if it waits the 300 s out
    assert parked.returncode == 3, parked.stderr
    warnings = [line for line in parked.stderr.splitlines() if "warning" in line]
    assert warnings == ["agentcli: warning: notify command did not finish within 2 s: stopped"]
    pid = int(pid_file.read_text())
    until(lambda: not _exists(pid), what=f"the notify command's child {pid} went with it")


def _exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_chat_rings_once_with_a_safe_notification_when_a_review_waits(
    agent: Agent, tmp_path: Path
) -> None:
    told = tmp_path / "told.json"
    path = config(agent, f"cat > {shlex.quote(str(told))}", after=1)
    hostile = "echo \x1b]9;evil\x07\x1b]777;notify;x;y\x07 \x9b2J; done"
    agent.server.push(tool_calls(("shell", {"command": hostile})), text("Left it."))
    child = agent.spawn("chat", "--config", path)
    seen = io.StringIO()
    child.logfile_read = seen
    child.expect(PROMPT)
    child.sendline("do it")
    child.expect(CHOICE)
    before = len(seen.getvalue())
    child.expect_exact("\x1b]777;notify;")  # after about a second
    # ...and not again: a second ring would come `after` (1 s) later. The only window kept
    # in the suite: what it looks for is something not happening (on a busy machine a
    # late second ring could slip past it, never the other way round)
    assert child.expect_exact(["\x1b]777;notify;", pexpect.TIMEOUT], timeout=2) == 1
    child.sendline("r")
    child.expect("Left it.")
    child.sendline("/exit")
    child.expect(pexpect.EOF)
    waited = seen.getvalue()[before:]
    assert waited.count("\x1b]9;") == 1 and waited.count("\x1b]777;") == 1
    body = "approval needed: shell echo ]9 evil ]777 notify x y 2J done"
    assert f"\x07\x1b]9;{body}\x07\x1b]777;notify;agentcli;{body}\x07" in waited
    assert "\x9b" not in seen.getvalue()  # no raw control from the argument anywhere
    document = json.loads(told.read_text())
    assert document["event"] == "review_waiting"
    assert document["pending"][0]["args"] == {"command": hostile}
    named = digest(document["thread_id"], "call_1", 0, "shell", {"command": hostile})
    assert document["pending"][0]["digest"] == named  # as `review` names the call
