"""Plan mode through the installed command: a plan parked and decided by `review`, run as a
graph (`$1` substituted, independent tasks at the same time), dropped, edited and denied
tasks, a kill during a plan, and the chat's plan review."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pexpect
import pytest

from tests.e2e.conftest import Agent
from tests.helpers.killing import kill_when_logged
from tests.helpers.scripted_server import text, tool_calls
from tests.helpers.terminal import PROMPT
from tests.helpers.tooling import local_http
from tests.helpers.waiting import NeverHappened, until

MEET_S = 8  # under the fetch tool's 10 s read limit (tools/web.py IO_TIMEOUT)
CHOICE = r"\[a\]pprove  \[e\]dit N  \[d\]rop N.*\[q\]uit >"


def plan(*tasks: tuple[int, str, dict, list[int]]) -> dict:
    return tool_calls(
        ("plan", {"tasks": [{"id": i, "tool": t, "args": a, "deps": d} for i, t, a, d in tasks]})
    )


class _Slow(BaseHTTPRequestHandler):
    """Notes when each request came and went. /fast... answers at once; any other path only
    once every path in `awaited` has come in (or after MEET_S): requests that run side by
    side meet here however busy the machine is, and requests that run one after the other
    do not overlap whatever the wait."""

    seen: list[tuple[str, float, float]] = []
    arrived: set[str] = set()
    awaited: set[str] = set()
    lock = threading.Lock()

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        start = time.monotonic()
        with self.lock:
            self.arrived.add(self.path)
        if not self.path.startswith("/fast"):
            try:
                until(lambda: self.awaited <= self.arrived, what="the others", timeout=MEET_S)
            except NeverHappened:
                pass  # one after the other: the test's own assertion says so
        body = self.path.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        with self.lock:
            self.seen.append((self.path, start, time.monotonic()))

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def slow_site(agent: Agent) -> Iterator[str]:
    config = Path(agent.env["XDG_CONFIG_HOME"]) / "agentcli" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("[tools]\nallow_private_urls = true\n")
    _Slow.seen, _Slow.arrived, _Slow.awaited = [], set(), set()
    with local_http(_Slow) as httpd:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"


def parked(agent: Agent, *extra: str) -> dict:
    result = agent.run("run", "--plan", "do the four things", "-o", "json", *extra)
    assert result.returncode == 3, result.stderr
    return json.loads(result.stdout)


def outcome(agent: Agent, thread: str) -> dict[int, dict]:
    """Each task's outcome, as `threads show --json` gives the plan's result."""
    shown = json.loads(agent.run("threads", "show", thread, "--json").stdout)
    [plan_call] = [c for e in shown["entries"] for c in e.get("calls", []) if c.get("plan")]
    return {task["id"]: task for task in plan_call["plan"]}


def test_a_plan_parks_once_then_runs_as_a_graph_with_results_substituted(
    agent: Agent, slow_site: str
) -> None:
    agent.server.push(
        plan(
            (1, "shell", {"command": "printf alpha"}, []),
            (2, "fetch_url", {"url": f"{slow_site}/two"}, []),
            (3, "fetch_url", {"url": f"{slow_site}/three"}, []),
            (4, "write_file", {"path": "out.txt", "content": "got $1"}, [1]),
        )
    )
    _Slow.awaited = {"/two", "/three"}
    run = parked(agent)
    assert [(p["plan_task"], p["tool"], p["deps"]) for p in run["pending"]] == [
        (1, "shell", []),
        (2, "fetch_url", []),
        (3, "fetch_url", []),
        (4, "write_file", [1]),
    ]
    assert not (agent.workspace / "out.txt").exists()  # nothing runs before the review
    agent.server.push(text("Done: four things."))
    decided = agent.run("review", run["thread_id"], "--approve", "all", "-o", "json")
    assert decided.returncode == 0, decided.stderr
    assert json.loads(decided.stdout)["final"] == "Done: four things."
    assert (agent.workspace / "out.txt").read_text() == "got alpha"
    (_, a_start, a_end), (_, b_start, b_end) = sorted(_Slow.seen)
    assert a_start < b_end and b_start < a_end  # the two fetches overlapped in time
    assert len(agent.server.requests) == 2  # one plan, one answer: no model call per task
    told = agent.server.requests[-1]["messages"][-1]
    assert told["role"] == "tool" and told["content"].startswith("Plan results (4 tasks):")
    done = outcome(agent, run["thread_id"])
    assert {n: t["state"] for n, t in done.items()} == {1: "done", 2: "done", 3: "done", 4: "done"}
    assert done[4]["ran_args"] == {"path": "out.txt", "content": "got alpha"}
    audit = json.loads(agent.run("audit", "--thread", run["thread_id"], "--json").stdout)
    [ran] = [r for r in audit if r["decision"] == "substituted"]
    assert '+  "content": "got alpha",' in ran["diff"]


def _meets(me: str, other: str) -> str:
    """A shell command that writes its start time, waits (at most 60 s) until `other` has
    started, and writes its end time: run one after the other, the first would end before
    the second started. The start file appears whole (renamed into place): the redirect
    alone makes it before `date` reads the clock, and the other could end in between."""
    return (
        f"date +%s.%N > {me}.tmp && mv {me}.tmp {me}.start; i=0;"
        f" while [ ! -e {other}.start ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done;"
        f" date +%s.%N > {me}.end"
    )


def test_independent_shell_tasks_run_side_by_side_and_undo_takes_them_back_together(
    agent: Agent,
) -> None:
    agent.server.push(
        plan(
            (1, "shell", {"command": _meets("a", "b")}, []),
            (2, "shell", {"command": _meets("b", "a")}, []),
            (3, "shell", {"command": "date +%s.%N > c.start"}, [1]),
        ),
        text("Three."),
    )
    result = agent.run("run", "--plan", "three commands", "-y", "-o", "json")
    assert result.returncode == 0, result.stderr
    thread = json.loads(result.stdout)["thread_id"]

    def at(name: str) -> float:
        return float((agent.workspace / name).read_text())

    assert at("a.start") < at("b.end") and at("b.start") < at("a.end")  # side by side
    assert at("c.start") >= at("a.end")  # after the task it needs
    assert {n: t["state"] for n, t in outcome(agent, thread).items()} == {
        1: "done",
        2: "done",
        3: "done",
    }
    undone = agent.run("undo", thread, "--yes", "--files-only")
    assert undone.returncode == 0, undone.stderr
    assert "restored together (these calls ran side by side)" in undone.stderr
    assert sorted(p.name for p in agent.workspace.iterdir()) == []


def test_dropping_a_task_drops_its_dependents_and_an_edit_runs_with_the_edit(
    agent: Agent,
) -> None:
    agent.server.push(
        plan(
            (1, "write_file", {"path": "a.txt", "content": "a"}, []),
            (2, "write_file", {"path": "b.txt", "content": "after $1"}, [1]),
            (3, "write_file", {"path": "c.txt", "content": "c"}, []),
        )
    )
    run = parked(agent)
    thread = run["thread_id"]
    first, _, third = (p["call_id"] for p in run["pending"])
    agent.server.push(text("Partly done."))
    edited = json.dumps({"path": "c.txt", "content": "edited c"})
    decided = agent.run(
        "review", thread, "--reject", first, "--edit", third, "--args", edited, "--approve", "all"
    )
    assert decided.returncode == 0, decided.stderr
    assert sorted(p.name for p in agent.workspace.iterdir()) == ["c.txt"]
    assert (agent.workspace / "c.txt").read_text() == "edited c"
    done = outcome(agent, thread)
    assert done[1]["state"] == "dropped" and done[3]["state"] == "done"
    assert (done[2]["state"], done[2]["why"]) == ("dropped", "needs task 1, which will not run")


def test_a_denied_tool_in_a_plan_is_refused_while_the_rest_runs(agent: Agent) -> None:
    agent.server.push(
        plan(
            (1, "shell", {"command": "touch denied.txt"}, []),
            (2, "write_file", {"path": "kept.txt", "content": "kept"}, []),
        ),
        text("One of two."),
    )
    result = agent.run("run", "--plan", "two things", "-y", "--deny", "shell", "-o", "json")
    assert result.returncode == 0, result.stderr
    assert not (agent.workspace / "denied.txt").exists()
    assert (agent.workspace / "kept.txt").read_text() == "kept"
    done = outcome(agent, json.loads(result.stdout)["thread_id"])
    assert (done[1]["state"], done[2]["state"]) == ("dropped", "done")


@pytest.mark.parametrize("decision", ["--approve", "--reject"])
def test_a_kill_during_a_plan_resumes_without_running_finished_tasks_again(
    agent: Agent, decision: str
) -> None:
    wait = "for i in $(seq 300); do [ -f go ] && break; sleep 0.1; done"
    agent.server.push(
        plan(
            (1, "shell", {"command": "echo one >> ran.log"}, []),
            (2, "shell", {"command": f"echo two >> ran.log; {wait}"}, [1]),
            (3, "shell", {"command": "echo three >> ran.log"}, [2]),
        )
    )
    log = agent.workspace / "ran.log"
    kill_when_logged(agent, ["run", "--plan", "three steps", "-y"], log, "two")
    [row] = json.loads(agent.run("threads", "list", "--json").stdout)
    thread = row["thread_id"]
    (agent.workspace / "go").touch()
    listed = json.loads(agent.run("review", thread, "--json").stdout)
    assert [(p["call_id"].rsplit(".", 1)[1], p.get("rerun")) for p in listed] == [("2", "started")]
    agent.server.push(text("Three steps, one of them possibly twice."))
    decided = agent.run("review", thread, decision, "all")
    assert decided.returncode == 0, decided.stderr
    # task 1 finished before the kill and is not run again; task 2 was asked about: run
    # again as planned, or rejected, and then task 3, which needs it, does not run
    if decision == "--approve":
        assert log.read_text().split() == ["one", "two", "two", "three"]
    else:
        assert log.read_text().split() == ["one", "two"]
        done = outcome(agent, thread)
        assert (done[2]["state"], done[3]["state"]) == ("failed", "skipped")


def test_the_chat_shows_the_plan_and_drops_a_task_with_its_dependents(agent: Agent) -> None:
    agent.server.push(
        plan(
            (1, "write_file", {"path": "a.txt", "content": "a"}, []),
            (2, "write_file", {"path": "b.txt", "content": "$1"}, [1]),
            (3, "write_file", {"path": "c.txt", "content": "c"}, []),
        ),
        text("Wrote c."),
    )
    child = agent.spawn("chat", "--plan", "write three files")
    child.expect("plan: 3 task")
    child.expect(r"2  write_file .*after 1")
    child.expect(CHOICE)
    child.send("d")
    child.expect(r"task \([\d, ]+\) >")
    child.sendline("1")
    child.expect("task 1 dropped; with it go 2, which need it")
    child.expect(CHOICE)
    child.sendline("a")
    child.expect("Wrote c.")
    child.expect(PROMPT)
    child.sendline("/exit")
    child.expect(pexpect.EOF)
    assert sorted(p.name for p in agent.workspace.iterdir()) == ["c.txt"]
    sent = agent.server.requests[0]
    assert [t["function"]["name"] for t in sent["tools"]] == ["plan"]
