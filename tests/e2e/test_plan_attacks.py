"""Plan mode attacked through the installed command (issue 20): what the person sees at the
terminal review against what runs, `agentcli review` deciding plan tasks by call id, an
expired plan, Ctrl-C while tasks wait, the rerun question after a kill, a plan call beside
an invalid one, and the audit chain over all of it."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import time
from pathlib import Path

import pexpect

from tests.e2e.conftest import AGENTCLI, Agent
from tests.e2e.test_plan import CHOICE, PROMPT, outcome, plan
from tests.helpers.killing import kill_when_logged
from tests.helpers.scripted_server import text, tool_calls
from tests.helpers.waiting import file_holds, until


def config(agent: Agent, body: str) -> None:
    path = Path(agent.env["XDG_CONFIG_HOME"]) / "agentcli" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body)


def audit_ok(agent: Agent) -> None:
    verified = agent.run("audit", "verify")
    assert verified.returncode == 0, verified.stdout + verified.stderr


def settled_row(agent: Agent) -> dict | None:
    """The thread's row in `threads list`, once its run is no longer running."""
    row = json.loads(agent.run("threads", "list", "--json").stdout)[0]
    return None if row["status"] == "running" else row


def parked_thread(agent: Agent) -> tuple[str, list[dict]]:
    parked = agent.run("run", "--plan", "do it", "-o", "json")
    assert parked.returncode == 3, parked.stderr
    document = json.loads(parked.stdout)
    return document["thread_id"], document["pending"]


# -- the terminal review: what the person sees is what runs -----------------------------------

HIDDEN = "touch PWNED"


def test_the_plan_review_shows_every_character_of_a_task_it_asks_about(agent: Agent) -> None:
    """A long command's tail is where the harm hides: the single-call review shows every
    character; the plan review must too before `a` approves it."""
    padded = "echo checking the build" + " " * 200 + f"; {HIDDEN}"
    agent.server.push(
        plan((1, "shell", {"command": "ls"}, []), (2, "shell", {"command": padded}, []))
    )
    child = agent.spawn("chat", "--plan", "check the build")
    child.expect(CHOICE)
    shown = re.sub(r"\s", "", child.before)  # lines wrapped at the terminal's width
    child.sendeof()  # the plan stays waiting; the chat ends
    child.expect(pexpect.EOF)
    assert re.sub(r"\s", "", HIDDEN) in shown, "the review hid the end of task 2's command"


PAYLOADS_SCREEN = {
    "bidi": "echo safe \u202erm -rf ~\u202c",
    "escape": "echo safe\x1b[2K\x1b[1Grm -rf ~",
    "carriage return": "rm -rf ~\recho safe",
    "zero width": "echo safe\u200b; rm -rf ~",
}


def test_what_a_plan_task_hides_from_the_terminal_is_shown_as_marks(agent: Agent) -> None:
    tasks = [(n, "shell", {"command": c}, []) for n, c in enumerate(PAYLOADS_SCREEN.values(), 1)]
    agent.server.push(plan(*tasks))
    child = agent.spawn("chat", "--plan", "tricky")
    child.expect(CHOICE)
    shown = child.before
    child.sendeof()  # the plan stays waiting; the chat ends
    child.expect(pexpect.EOF)
    assert "\u202e" not in shown and "\u200b" not in shown and "\x1b[2K" not in shown
    assert "⟦U+202E⟧" in shown and "⟦U+200B⟧" in shown  # marked where they are
    assert "\\u001b[2K" in shown and "\\r" in shown  # JSON's escapes: visible text


def test_an_edit_of_one_task_runs_only_that_edit(agent: Agent) -> None:
    agent.server.push(
        plan(
            (1, "write_file", {"path": "a.txt", "content": "model's a"}, []),
            (2, "write_file", {"path": "b.txt", "content": "model's b"}, []),
        ),
        text("Wrote both."),
    )
    child = agent.spawn("chat", "--plan", "two files", env={"EDITOR": ""})
    child.expect(CHOICE)
    child.send("e")
    child.expect(r"task \([\d, ]+\) >")
    child.sendline("2")
    child.expect("new arguments as JSON >")
    child.send("\x15" + '{"path": "b.txt", "content": "person\'s b"}\r')  # Ctrl-U: clear
    child.expect(CHOICE)
    child.sendline("a")
    child.expect("Wrote both.")
    child.expect(PROMPT)
    child.sendline("/exit")
    child.expect(pexpect.EOF)
    assert (agent.workspace / "a.txt").read_text() == "model's a"
    assert (agent.workspace / "b.txt").read_text() == "person's b"
    audit_ok(agent)


# -- agentcli review: plan tasks by call id ----------------------------------------------------


def test_review_decides_a_plan_only_task_by_task(agent: Agent) -> None:
    agent.server.push(
        plan(
            (1, "write_file", {"path": "a.txt", "content": "a"}, []),
            (2, "write_file", {"path": "b.txt", "content": "$1"}, [1]),
        )
    )
    thread, pending = parked_thread(agent)
    first, second = (p["call_id"] for p in pending)
    plan_call = first.rsplit(".", 1)[0]
    partly = agent.run("review", thread, "--approve", first)  # the other left undecided
    assert partly.returncode == 2 and f"call {second} has no decision" in partly.stderr
    whole = agent.run("review", thread, "--approve", plan_call)  # the plan call's own id
    assert whole.returncode == 2 and f"no pending call '{plan_call}'" in whole.stderr
    outside = json.dumps({"path": "../escape.txt", "content": "x"})
    escaped = agent.run("review", thread, "--edit", second, "--args", outside, "--approve", first)
    assert escaped.returncode == 2 and not (agent.workspace.parent / "escape.txt").exists()
    assert not list(agent.workspace.iterdir())  # nothing ran
    agent.server.push(text("Only a."))
    decided = agent.run("review", thread, "--approve", first, "--reject", second)
    assert decided.returncode == 0, decided.stderr
    assert sorted(p.name for p in agent.workspace.iterdir()) == ["a.txt"]
    again = agent.run("review", thread, "--approve", first)  # a retrying script
    assert again.returncode == 0 and "already decided" in again.stderr
    assert sorted(p.name for p in agent.workspace.iterdir()) == ["a.txt"]
    audit_ok(agent)


def test_the_same_task_id_in_two_threads_needs_the_thread(agent: Agent) -> None:
    """Servers that number calls from call_1 each turn: call_1.1 waits in two threads."""
    agent.server.push(plan((1, "write_file", {"path": "one.txt", "content": "1"}, [])))
    first, _ = parked_thread(agent)
    agent.server.restart_call_ids()
    agent.server.push(plan((1, "write_file", {"path": "two.txt", "content": "2"}, [])))
    second, _ = parked_thread(agent)
    both = agent.run("review", "--approve", "call_1.1")
    assert both.returncode == 2 and "pending in 2 threads" in both.stderr
    assert not list(agent.workspace.iterdir())
    agent.server.push(text("Two."))
    chosen = agent.run("review", "--thread", second, "--approve", "call_1.1")
    assert chosen.returncode == 0, chosen.stderr
    assert sorted(p.name for p in agent.workspace.iterdir()) == ["two.txt"]
    assert [r["thread_id"] for r in json.loads(agent.run("review", "--json").stdout)] == [first]


def test_an_expired_plan_runs_nothing(agent: Agent) -> None:
    config(agent, '[approval]\nexpire_after = "1s"\n')
    agent.server.push(
        plan(
            (1, "write_file", {"path": "a.txt", "content": "a"}, []),
            (2, "shell", {"command": "touch b.txt"}, []),
        )
    )
    thread, _ = parked_thread(agent)
    time.sleep(1.3)  # the subject: the review's age, past expire_after (a busy machine adds)
    agent.server.push(text("It expired."))
    later = agent.run("run", "--thread", thread, "-y", "-o", "json")  # -y: too late to allow
    assert later.returncode == 0, later.stderr
    assert not list(agent.workspace.iterdir())
    decisions = [r["decision"] for r in json.loads(agent.run("audit", "--json").stdout)]
    assert decisions == ["expired", "expired"]
    told = agent.server.requests[-1]["messages"][-1]
    assert told["role"] == "tool" and "expired" in told["content"]
    audit_ok(agent)


# -- interruptions ------------------------------------------------------------------------------

# a task that runs until Ctrl-C stops it (a minute, were it not stopped): a fixed `sleep 3`
# could end by itself on a busy machine before the Ctrl-C came
STOPPED_ONLY = "sleep 60"


def test_ctrl_c_while_a_task_waits_runs_nothing_on_a_half_result(agent: Agent) -> None:
    agent.server.push(
        plan(
            (1, "shell", {"command": f"echo start >> log; {STOPPED_ONLY}; echo one >> log"}, []),
            (2, "shell", {"command": "echo two $1 >> log"}, [1]),
            (3, "shell", {"command": "echo three >> log"}, []),
        ),
        text("Stopped."),
    )
    child = agent.spawn("chat", "--plan", "-y", "three steps")
    log = agent.workspace / "log"
    # task 2 was sent with task 1 and waits for it: by the time task 1's command has started
    # (a process of its own), task 2 is waiting
    until(file_holds(log, "start"), what="task 1 started", process=child)
    child.sendintr()
    child.expect("interrupted")
    child.expect(PROMPT)
    # the prompt is back while the step's tasks end in the background: leaving now would cut
    # off a task still running (a question at the next run, and a traceback: not plan mode's)
    row = until(lambda: settled_row(agent), what="the interrupted run ended")
    child.sendline("/exit")
    child.expect(pexpect.EOF)
    later = agent.run("run", "--thread", row["thread_id"], "-y")
    assert later.returncode == 0, later.stderr
    # task 1 was stopped, task 2 never ran; task 3 (it may have waited for the workspace,
    # which task 1 held for undo's snapshots, and been stopped too) ran at most once
    assert sorted(log.read_text().split()) in (["start", "three"], ["start"])
    done = outcome(agent, row["thread_id"])
    assert (done[1]["state"], done[2]["state"]) == ("failed", "skipped")
    assert done[2]["why"] == "task 1 failed" and done[2]["ran_args"] is None
    audit_ok(agent)


def test_after_a_kill_a_task_cut_off_cannot_be_edited_and_done_stops_what_needs_it(
    agent: Agent,
) -> None:
    wait = "for i in $(seq 300); do [ -f go ] && break; sleep 0.1; done"
    agent.server.push(
        plan(
            (1, "shell", {"command": "echo one >> ran.log"}, []),
            (2, "shell", {"command": f"echo two $1 >> ran.log; {wait}"}, [1]),
            (3, "shell", {"command": "echo three >> ran.log"}, [2]),
        )
    )
    child = subprocess.Popen(
        [AGENTCLI, "run", "--plan", "three steps", "-y"],
        cwd=agent.workspace,
        env=agent.env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    log = agent.workspace / "ran.log"
    until(file_holds(log, "two"), what="task 2 started", process=child)
    os.killpg(child.pid, signal.SIGKILL)
    child.wait(60)
    (agent.workspace / "go").touch()
    [row] = json.loads(agent.run("threads", "list", "--json").stdout)
    thread = row["thread_id"]
    [cut] = json.loads(agent.run("review", thread, "--json").stdout)
    assert cut.get("rerun") == "started"
    edited = json.dumps({"command": "echo edited >> ran.log"})
    refused = agent.run("review", thread, "--edit", cut["call_id"], "--args", edited)
    assert refused.returncode != 0 and "edited" not in log.read_text()
    agent.server.push(text("Task 2 marked done."))
    marked = agent.run("review", thread, "--done", cut["call_id"])
    assert marked.returncode == 0, marked.stderr
    assert log.read_text().split() == ["one", "two"]  # nothing ran again
    done = outcome(agent, thread)
    assert (done[2]["state"], done[3]["state"]) == ("failed", "skipped")
    audit_ok(agent)


def test_a_plan_call_beside_an_invalid_call_is_told_why_it_did_not_run(agent: Agent) -> None:
    plan_args = {"tasks": [{"id": 1, "tool": "write_file", "args": {"path": "a", "content": "a"}}]}
    bad = ("write_file", "nonsense{")  # arguments that are not JSON at all
    agent.server.push(tool_calls(("plan", plan_args), bad))
    agent.server.push(text("I will plan again."))
    result = agent.run("run", "--plan", "two", "-o", "json")
    assert result.returncode == 0, result.stderr
    assert not list(agent.workspace.iterdir())
    records = json.loads(agent.run("audit", "--json").stdout)
    plan_record = next(r for r in records if r["tool"] == "plan")
    assert plan_record["decision"] == "invalid", plan_record  # agentcli's, not a client's
    told = [m for m in agent.server.requests[-1]["messages"] if m["role"] == "tool"]
    assert all("client" not in m["content"] for m in told), told


def test_a_new_message_after_ctrl_c_mid_plan_runs_none_of_the_rest(agent: Agent) -> None:
    """Ctrl-C stops a plan between tasks; the person then writes something else. The tasks
    left do not run in the new turn, and the model is told so in a request a real server
    takes: the plan call's result right after the call, before the new message."""
    agent.server.push(
        plan(
            (1, "shell", {"command": f"echo start >> log; {STOPPED_ONLY}; echo one >> log"}, []),
            (2, "write_file", {"path": "later.txt", "content": "$1"}, [1]),
        ),
    )
    child = agent.spawn("chat", "--plan", "-y", "two steps")
    log = agent.workspace / "log"
    until(file_holds(log, "start"), what="task 1 started", process=child)
    child.sendintr()
    child.expect(PROMPT)
    until(lambda: settled_row(agent), what="the interrupted run ended")
    agent.server.push(text("Stopped, as you asked."))
    child.sendline("never mind, stop")
    child.expect("Stopped, as you asked.")
    child.expect(PROMPT)
    child.sendline("/exit")
    child.expect(pexpect.EOF)
    assert not (agent.workspace / "later.txt").exists()
    sent = agent.server.requests[-1]["messages"]
    for index, message in enumerate(sent):  # OpenAI's rule for tool calls and results
        if message["role"] == "assistant" and message.get("tool_calls"):
            ids = {c["id"] for c in message["tool_calls"]}
            follow = sent[index + 1 : index + 1 + len(ids)]
            assert [m["role"] for m in follow] == ["tool"] * len(ids), [m["role"] for m in sent]
    told = next(m for m in sent if m["role"] == "tool")
    assert "outside agentcli" not in told["content"], told["content"]
    # task 2 saw task 1 stopped (skipped), or was still deferred when the message came
    assert 'Task 2 write_file {"path": "later.txt", "content": "$1"}: not run' in told["content"]
    records = json.loads(agent.run("audit", "--json").stdout)
    task_two = [r["decision"] for r in records if r["call_id"].endswith(".2")]
    assert task_two[-1] in ("skipped", "dismissed"), task_two  # the audit says it did not run
    audit_ok(agent)


def test_a_kill_while_a_task_waits_asks_only_about_the_one_that_started(agent: Agent) -> None:
    wait = "for i in $(seq 300); do [ -f go ] && break; sleep 0.1; done"
    agent.server.push(
        plan(
            (1, "shell", {"command": f"echo one >> ran.log; {wait}; echo result-$RANDOM"}, []),
            (2, "shell", {"command": "echo two $1 >> ran.log"}, [1]),
        )
    )
    thread, _ = parked_thread(agent)  # approved by a person: the tasks run in `review`
    log = agent.workspace / "ran.log"
    # task 2 waits for task 1 on the board of a process about to die (or is not yet taken
    # up: either way it never started, and the answer below is the same)
    kill_when_logged(agent, ["review", thread, "--approve", "all"], log, "one")
    (agent.workspace / "go").touch()
    listed = json.loads(agent.run("review", thread, "--json").stdout)
    assert [(p["call_id"].rsplit(".", 1)[1], p.get("rerun")) for p in listed] == [("1", "started")]
    agent.server.push(text("Both, task 1 twice."))
    decided = agent.run("review", thread, "--approve", "all")
    assert decided.returncode == 0, decided.stderr
    lines = log.read_text().split()
    done = outcome(agent, thread)
    second_result = shlex.split(done[2]["ran_args"]["command"])[2]  # what $1 stood for
    assert second_result.startswith("result-")  # task 1's output, of the run asked about
    assert lines == ["one", "one", "two", second_result.strip()]
    audit_ok(agent)


def test_call_ids_a_server_numbers_again_each_turn_never_mix_two_plans(agent: Agent) -> None:
    """Both plans are call_1 with tasks call_1.1 and call_1.2 in one thread: the second
    plan's $1 is its own task 1's result, and nothing of the first runs again."""
    agent.server.push(
        plan(
            (1, "shell", {"command": "echo first-plan >> ran.log; echo FIRST"}, []),
            (2, "shell", {"command": "echo got $1 >> ran.log"}, [1]),
        ),
        text("First done."),
    )
    first = agent.run("run", "--plan", "one", "-y", "-o", "json")
    assert first.returncode == 0, first.stderr
    thread = json.loads(first.stdout)["thread_id"]
    agent.server.restart_call_ids()
    agent.server.push(
        plan(
            (1, "shell", {"command": "echo second-plan >> ran.log; echo SECOND"}, []),
            (2, "shell", {"command": "echo got $1 >> ran.log"}, [1]),
        ),
        text("Second done."),
    )
    second = agent.run("run", "--thread", thread, "--plan", "two", "-y")
    assert second.returncode == 0, second.stderr
    lines = (agent.workspace / "ran.log").read_text().split()
    assert lines == ["first-plan", "got", "FIRST", "second-plan", "got", "SECOND"]
    audit_ok(agent)
