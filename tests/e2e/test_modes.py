"""Approval modes through the installed command: `--mode` on run and chat, `/mode` in chat
(the header shows it), `[approval] mode` in the config, `--plan` as `--mode plan`, and the
audit naming the mode that decided."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.conftest import Agent
from tests.helpers.scripted_server import text, tool_calls
from tests.helpers.terminal import CHOICE, PROMPT, leave

READ = ("read_file", {"path": "a.txt"})
WRITE = ("write_file", {"path": "b.txt", "content": "b\n"})


def config(agent: Agent, body: str) -> None:
    path = Path(agent.env["XDG_CONFIG_HOME"]) / "agentcli" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body)


def audit(agent: Agent, thread: str) -> list[tuple[str, str, str]]:
    done = agent.run("audit", "--thread", thread, "--json")
    assert done.returncode == 0, done.stderr
    return [(r["tool"], r["who"], r["by"]) for r in json.loads(done.stdout)]


def test_run_mode_read_runs_reads_parks_a_write_and_the_audit_names_the_mode(
    agent: Agent,
) -> None:
    (agent.workspace / "a.txt").write_text("a\n")
    agent.server.push(tool_calls(READ), tool_calls(WRITE))
    first = agent.run("run", "--mode", "read", "-o", "json", "go")
    assert first.returncode == 3, first.stderr  # the write still asks: parked
    out = json.loads(first.stdout)
    assert [p["tool"] for p in out["pending"]] == ["write_file"]
    assert agent.server.requests[1]["messages"][-1]["content"].split() == ["1", "a"]  # read
    assert audit(agent, out["thread_id"]) == [
        ("read_file", "mode", "mode read (a read inside the workspace)")
    ]


def test_the_config_sets_the_mode_and_the_flag_beats_it(agent: Agent) -> None:
    config(agent, '[approval]\nmode = "edit"\n')
    agent.server.push(tool_calls(WRITE), text("done"))
    edited = agent.run("run", "-o", "json", "write b")
    assert edited.returncode == 0, edited.stderr
    assert (agent.workspace / "b.txt").read_text() == "b\n"
    thread = json.loads(edited.stdout)["thread_id"]
    assert audit(agent, thread)[-1][2] == "mode edit (an undoable write inside the workspace)"
    agent.server.push(tool_calls(("write_file", {"path": "c.txt", "content": "c"})))
    asked = agent.run("run", "--mode", "ask", "-o", "json", "write c")
    assert asked.returncode == 3, asked.stderr
    config(agent, '[approval]\nmode = "yolo"\n')
    bad = agent.run("run", "hi")
    assert bad.returncode == 2 and "approval.mode" in bad.stderr and "auto" in bad.stderr


def test_plan_is_a_mode_and_plan_stays_its_alias(agent: Agent) -> None:
    clash = agent.run("run", "--plan", "--mode", "auto", "hi")
    assert clash.returncode == 2 and "--plan is --mode plan" in clash.stderr
    for flags in (["--mode", "plan"], ["--plan"]):
        agent.server.push(text("nothing to do"))
        done = agent.run("run", *flags, "hi")
        assert done.returncode == 0, done.stderr
        tools = [t["function"]["name"] for t in agent.server.requests[-1]["tools"]]
        assert "plan" in tools, flags  # the planner's request
    agent.server.push(text("plain"))
    assert agent.run("run", "hi").returncode == 0
    assert "plan" not in [t["function"]["name"] for t in agent.server.requests[-1]["tools"]]


def test_chat_shows_the_mode_in_its_header_and_slash_mode_changes_it(agent: Agent) -> None:
    (agent.workspace / "a.txt").write_text("a\n")
    agent.server.push(tool_calls(READ), text("read it"), tool_calls(READ), text("again"))
    child = agent.spawn("chat", "--mode", "edit")
    child.expect(r"thread [\w-]+ · new · .* · mode edit")
    child.expect(PROMPT)
    child.sendline("/mode ask")
    child.expect(r"thread [\w-]+ · new · .* · mode ask")
    child.expect("mode ask: every call waits for your review")
    child.expect(PROMPT)
    child.sendline("read a")
    child.expect(CHOICE)  # asked, in mode ask
    child.sendline("a")
    child.expect("read it")
    child.expect(PROMPT)
    child.sendline("/mode read")
    child.expect(r"· mode read")
    child.expect(PROMPT)
    child.sendline("read a again")
    child.expect("again")  # no review in mode read
    child.expect(PROMPT)
    child.sendline("/mode")
    child.expect(r"\* read\s+reads inside the workspace run")
    thread = leave(child)
    assert [who for _, who, _ in audit(agent, thread)] == ["person", "mode"]
