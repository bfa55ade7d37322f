"""`agentcli audit`: decisions across threads, the hash chain verified against an edited
database, and rules suggested for calls approved by hand."""

from __future__ import annotations

import json
import sqlite3

from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from agentcli.threads.langgraph_internals import checkpoint_serializer
from tests.e2e.conftest import Agent
from tests.helpers.scripted_server import text, tool_calls


def parked(agent: Agent, tool: str, args: dict, message: str = "go", *thread: str) -> dict:
    """Run until the call waits for review; the run's JSON."""
    agent.server.push(tool_calls((tool, args)))
    extra = ("--thread", thread[0]) if thread else ()
    result = agent.run("run", message, *extra, "-o", "json")
    assert result.returncode == 3, result.stderr
    return json.loads(result.stdout)


def decide(agent: Agent, run: dict, *how: str) -> None:
    agent.server.push(text("Done."))
    call = run["pending"][0]["call_id"]
    result = agent.run("review", run["thread_id"], how[0], call, *how[1:])
    assert result.returncode == 0, result.stderr


def two_threads(agent: Agent) -> tuple[str, str]:
    first = parked(agent, "shell", {"command": "echo one"})
    decide(agent, first, "--approve")
    second = parked(agent, "write_file", {"path": "x.txt", "content": "draft"})
    args = '{"path": "x.txt", "content": "final"}'
    decide(agent, second, "--edit", "--args", args)
    return first["thread_id"], second["thread_id"]


def audit_writes(db: str) -> list[tuple[int, list]]:
    """(rowid, records) of each write to the `audit` channel in the checkpoint database."""
    serde = checkpoint_serializer()  # as agentcli stores them: compressed
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT rowid, type, value FROM writes WHERE channel = 'audit' ORDER BY rowid"
        ).fetchall()
    return [(rowid, serde.loads_typed((kind, value))) for rowid, kind, value in rows]


def rewrite(db: str, rowid: int, records: list) -> None:
    """What an attacker with write access to the database does: store other records."""
    kind, value = JsonPlusSerializer().dumps_typed(records)
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE writes SET type = ?, value = ? WHERE rowid = ?", (kind, value, rowid))


def test_audit_lists_the_decisions_of_two_threads_with_an_edit_as_a_diff(agent: Agent) -> None:
    one, two = two_threads(agent)
    listed = agent.run("audit", "--json")
    assert listed.returncode == 0, listed.stderr
    records = json.loads(listed.stdout)
    assert [(r["thread"], r["tool"], r["decision"], r["who"]) for r in records] == [
        (one, "shell", "approved", "person"),
        (two, "write_file", "edited", "person"),
    ]
    assert records[0]["status"] == "ok" and records[0]["by"] == "agentcli review"
    assert records[0]["diff"] is None and "workspace-write" in (records[0]["sandbox"] or "")
    assert '-  "content": "draft"' in records[1]["diff"]
    assert '+  "content": "final"' in records[1]["diff"]

    shown = agent.run("audit")
    assert shown.returncode == 0, shown.stderr
    assert one in shown.stdout and two in shown.stdout and '+  "content": "final"' in shown.stdout
    only = json.loads(agent.run("audit", "--thread", two[:6], "--json").stdout)
    assert [r["thread"] for r in only] == [two]
    assert len(json.loads(agent.run("audit", "--since", "1h", "--json").stdout)) == 2
    assert json.loads(agent.run("audit", "--since", "2999-01-01", "--json").stdout) == []
    bad = agent.run("audit", "--since", "yesterday")
    assert bad.returncode == 2 and "--since" in bad.stderr


def test_verify_passes_untouched_and_catches_an_edited_record(agent: Agent) -> None:
    one, _ = two_threads(agent)
    good = agent.run("audit", "verify")
    assert good.returncode == 0, good.stderr
    assert "audit verified: 2 threads, 2 chained records" in good.stdout

    rowid, records = next(
        (r, w) for r, w in audit_writes(agent.db) if w and w[0]["tool"] == "shell"
    )
    records[0] = {**records[0], "args": {"command": "echo innocent"}}
    rewrite(agent.db, rowid, records)
    listed = json.loads(agent.run("audit", "--thread", one, "--json").stdout)
    assert listed[0]["args"] == {"command": "echo innocent"}  # the edit took effect
    caught = agent.run("audit", "verify")
    assert caught.returncode == 1
    assert f"thread {one} record 1: changed" in caught.stdout


def test_verify_catches_a_deleted_last_record(agent: Agent) -> None:
    first = parked(agent, "shell", {"command": "echo one"})
    decide(agent, first, "--approve")
    again = parked(agent, "shell", {"command": "echo two"}, "more", first["thread_id"])
    decide(agent, again, "--reject")
    assert agent.run("audit", "verify").returncode == 0
    rowid, records = [(r, w) for r, w in audit_writes(agent.db) if w][-1]
    assert records[-1]["decision"] == "rejected"
    rewrite(agent.db, rowid, records[:-1])
    assert len(json.loads(agent.run("audit", "--json").stdout)) == 1  # it is gone
    caught = agent.run("audit", "verify", "--thread", first["thread_id"])
    assert caught.returncode == 1
    assert "deleted: 1 record at the end" in caught.stdout


def test_suggest_proposes_a_scoped_rule_and_never_an_interpreter(agent: Agent) -> None:
    commands = ["git status", "git status --short", "git status", "python x.py"]
    commands += ["python y.py", "python y.py", "ls -l"]
    agent.server.push(tool_calls(*(("shell", {"command": c}) for c in commands)), text("Done."))
    run = agent.run("run", "go", "-o", "json")
    assert run.returncode == 3, run.stderr
    assert len(json.loads(run.stdout)["pending"]) == len(commands)
    approved = agent.run("review", json.loads(run.stdout)["thread_id"], "--approve", "all")
    assert approved.returncode == 0, approved.stderr  # each call approved by hand
    result = agent.run("audit", "suggest")
    assert result.returncode == 0, result.stderr
    assert '[[approval.rules]]\ntool = "shell"\nmatch = "git status*"\ndecision = "allow"' in (
        result.stdout
    )
    assert "approved by hand 3 times" in result.stdout
    assert "python" not in result.stdout and "ls" not in result.stdout.replace("--short", "")
    every = agent.run("audit", "suggest", "--min", "1").stdout
    assert 'match = "ls *"' in every and 'match = "python x.py"' in every  # exactly as approved
    assert "python *" not in every and "python y.py*" not in every
