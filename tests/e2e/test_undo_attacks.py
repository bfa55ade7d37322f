"""Attacks on undo through the installed command: escape sequences shown by `agentcli
diff` at a terminal, a .gitignore the agent wrote, and undo after a --files-only undo."""

from __future__ import annotations

import json

from tests.e2e.conftest import Agent
from tests.helpers.scripted_server import text, tool_calls

ESC = "\x1b"


def run_turn(agent: Agent, message: str, *calls: tuple[str, dict], thread: str = "") -> str:
    agent.server.push(tool_calls(*calls), text("ok"))
    args = ["run", message, "--auto-approve", "-o", "json"]
    result = agent.run(*args, *(["--thread", thread] if thread else []))
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)["thread_id"]


def test_diff_at_a_terminal_marks_escape_sequences_in_names_and_contents(agent: Agent) -> None:
    content = f"title {ESC}]0;pwned\x07 clear {ESC}[2J {ESC}[31mred\n"
    thread = run_turn(
        agent,
        "write",
        ("write_file", {"path": "plain.txt", "content": content}),
        ("shell", {"command": "printf x > \"$(printf 'n\\033[31mame')\""}),
    )
    child = agent.spawn("diff", thread)
    out = child.read()
    child.close()
    assert child.exitstatus == 0
    assert "+title" in out and "pwned" in out
    assert ESC not in out and "\x07" not in out
    piped = agent.run("diff", thread).stdout  # a pipe gets the patch as it is
    assert f"{ESC}[2J" in piped


def test_undo_names_a_gitignore_the_agent_wrote(agent: Agent) -> None:
    # one turn after the other: two calls of one turn run in either order
    thread = run_turn(agent, "hide", ("write_file", {"path": ".gitignore", "content": "*.log\n"}))
    run_turn(agent, "log", ("shell", {"command": "printf secret > out.log"}), thread=thread)
    result = agent.run("undo", thread, "--to", "1", "--yes", "--files-only")
    assert result.returncode == 0, result.stderr
    assert not (agent.workspace / ".gitignore").exists()
    assert (agent.workspace / "out.log").exists()  # never in a snapshot: left, but said
    assert "the agent changed .gitignore" in result.stderr


def test_undo_after_a_files_only_undo_and_more_turns(agent: Agent) -> None:
    a = agent.workspace / "a.txt"
    a.write_text("original\n")
    thread = run_turn(agent, "one", ("write_file", {"path": "a.txt", "content": "one\n"}))
    assert agent.run("undo", thread, "--yes", "--files-only").returncode == 0
    assert a.read_text() == "original\n"
    run_turn(agent, "two", ("write_file", {"path": "a.txt", "content": "two\n"}), thread=thread)
    run_turn(agent, "three", ("write_file", {"path": "a.txt", "content": "3\n"}), thread=thread)
    last = agent.run("undo", thread, "--yes", "--files-only")
    assert last.returncode == 0, last.stderr
    assert a.read_text() == "two\n"  # turn 3 taken back, turn 2 kept
    second = agent.run("undo", thread, "--to", "2", "--yes")
    assert second.returncode == 0, second.stderr
    assert a.read_text() == "original\n"
    fork = second.stdout.strip()
    run_turn(agent, "four", ("write_file", {"path": "a.txt", "content": "4\n"}), thread=fork)
    on_fork = agent.run("undo", fork, "--yes", "--files-only")
    assert on_fork.returncode == 0, on_fork.stderr
    assert a.read_text() == "original\n"
