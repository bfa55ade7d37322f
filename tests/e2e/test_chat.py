"""Interactive sessions driven through a real terminal (pexpect)."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pexpect
import pytest

from tests.e2e.conftest import Agent
from tests.helpers.scripted_server import hang, text, tool_calls
from tests.helpers.terminal import CHOICE, EDITED_CHOICE, PROMPT, ended, leave
from tests.helpers.waiting import until


def tool_contents(agent: Agent, request: int) -> dict[str, str]:
    messages = agent.server.requests[request]["messages"]
    return {m["tool_call_id"]: m["content"] for m in messages if m["role"] == "tool"}


def test_approve_runs_the_call(agent: Agent) -> None:
    agent.server.push(
        tool_calls(("write_file", {"path": "a.txt", "content": "hello\n"})),
        text("Wrote a.txt for you."),
    )
    child = agent.spawn("chat")
    child.expect(r"thread [\w-]+")
    child.expect(PROMPT)
    child.sendline("write hello to a.txt")
    child.expect("write_file")
    child.expect(r"\+hello")  # the review shows a diff of the new file
    child.expect(CHOICE)
    assert not (agent.workspace / "a.txt").exists()
    child.sendline("a")
    child.expect("Wrote a.txt for you.")
    leave(child)
    assert (agent.workspace / "a.txt").read_text() == "hello\n"


def test_edit_in_the_editor_with_a_bad_edit_first(agent: Agent, tmp_path) -> None:
    editor = tmp_path / "editor.py"
    editor.write_text(
        "import json, pathlib, sys\n"
        "flag, path = sys.argv[1], pathlib.Path(sys.argv[2])\n"
        "count = pathlib.Path(flag)\n"
        "n = int(count.read_text()) if count.exists() else 0\n"
        "count.write_text(str(n + 1))\n"
        "text = path.read_text()\n"
        "assert n == 0 or text == '{not json', text  # the refused edit is offered again\n"
        "args = {'path': 'b.txt', 'content': 'edited\\n'}\n"
        "path.write_text('{not json' if n == 0 else json.dumps(args))\n"
    )
    visual = f"{sys.executable} {editor} {tmp_path / 'count'}"  # the variable carries arguments
    agent.server.push(
        tool_calls(("write_file", {"path": "b.txt", "content": "original\n"})), text("Saved.")
    )
    child = agent.spawn("chat", "write b.txt", env={"VISUAL": visual})
    child.expect(CHOICE)
    child.sendline("e")
    child.expect("edit refused: not valid JSON")
    child.expect(CHOICE)
    child.sendline("e")
    child.expect(r"write_file \(edited\)")  # shown as it will run, not run yet
    child.expect(r"\+edited")
    child.expect(EDITED_CHOICE)
    assert not (agent.workspace / "b.txt").exists()
    child.send("a")
    child.expect("Saved.")
    leave(child)
    assert (agent.workspace / "b.txt").read_text() == "edited\n"
    sent = agent.server.requests[1]["messages"]
    call = next(m for m in sent if m["role"] == "assistant")["tool_calls"][0]
    assert '"edited\\n"' in call["function"]["arguments"]  # the history shows what really ran


def test_inline_edit_refuses_arguments_the_schema_refuses(agent: Agent) -> None:
    agent.server.push(tool_calls(("shell", {"command": "echo one"})), text("Ran it."))
    child = agent.spawn("chat", "run something")
    child.expect(CHOICE)
    child.sendline("e")
    child.expect("new arguments as JSON >")
    child.send("\x15" + '{"cmd": "echo two"}\r')  # Ctrl-U clears the prefilled JSON
    child.expect("edit refused: invalid arguments: 'command': Field required")
    child.expect("new arguments as JSON >")  # offered again at once, as typed
    child.send("\x15" + '{"command": "echo two"}\r')
    child.expect(EDITED_CHOICE)
    child.send("a")
    child.expect("Ran it.")
    leave(child)
    assert "two" in tool_contents(agent, 1)["call_1"]


def test_feedback_and_reject_in_one_turn(agent: Agent) -> None:
    agent.server.push(
        tool_calls(
            ("write_file", {"path": "c.txt", "content": "c"}),
            ("shell", {"command": "rm -rf build"}),
        ),
        text("Understood."),
    )
    child = agent.spawn("chat", "clean up")
    child.expect(r"write_file\S* \(1/2\)")
    child.expect(CHOICE)
    child.sendline("f")
    child.expect("feedback for the model >")
    child.sendline("name it notes.txt instead")
    child.expect(r"shell\S* \(2/2\)")
    child.expect("rm -rf build")
    child.expect(CHOICE)
    child.sendline("r")
    child.expect("Understood.")
    leave(child)
    assert tool_contents(agent, 1) == {
        "call_1": "name it notes.txt instead",
        "call_2": "rejected by the user",
    }
    assert list(agent.workspace.iterdir()) == []


@pytest.mark.backends
def test_quit_leaves_the_call_pending_and_resume_shows_it_first(agent: Agent) -> None:
    agent.server.push(tool_calls(("write_file", {"path": "later.txt", "content": "later\n"})))
    child = agent.spawn("chat", "write later.txt")
    child.expect(CHOICE)
    child.send("q")  # back to the prompt, the call waiting
    child.expect("1 call waiting for review")
    child.expect(PROMPT)
    child.sendeof()
    child.expect("calls are waiting for review")
    thread = ended(child)
    assert not (agent.workspace / "later.txt").exists()

    agent.server.push(text("Done at last."))
    child = agent.spawn("resume", thread)
    child.expect("later.txt")
    child.expect(CHOICE)
    child.sendline("a")
    child.expect("Done at last.")
    assert leave(child) == thread
    assert (agent.workspace / "later.txt").read_text() == "later\n"


def test_always_approves_the_tool_for_the_rest_of_the_thread(agent: Agent) -> None:
    agent.server.push(
        tool_calls(("list_dir", {"path": "."}), ("list_dir", {"path": "."})),
        tool_calls(("list_dir", {"path": "."})),
        text("Listed three times."),
    )
    child = agent.spawn("chat", "list")
    child.expect(CHOICE)
    child.sendline("A")  # a rule scoped to the folder: here the whole workspace
    child.expect(re.escape('rule: tool = "list_dir", match = "*", decision = "allow"'))
    child.expect(r"no earlier list_dir call in this thread to try it on")
    child.expect(r"\[t\]his thread.*\[b\]ack >")  # a key pressed before it is typed ahead
    child.sendline("t")
    child.expect("calls of list_dir this rule matches are allowed for the rest of this thread")
    child.expect(r"approved list_dir \(always")
    child.expect("Listed three times.")
    leave(child)
    assert len(agent.server.requests) == 3


@pytest.mark.backends
def test_ctrl_d_leaves_and_history_carries_over(agent: Agent) -> None:
    agent.server.push(text("Hello Ann."), text("You are Ann."))
    child = agent.spawn("chat")
    child.expect(PROMPT)
    child.sendline("I am Ann")
    child.expect("Hello Ann.")
    child.expect(PROMPT)
    child.sendeof()
    thread = ended(child)

    child = agent.spawn("chat", "--thread", thread, "who am I?")
    child.expect("You are Ann.")
    leave(child)
    contents = [m["content"] for m in agent.server.requests[1]["messages"]]
    assert contents[-3:] == ["I am Ann", "Hello Ann.", "who am I?"]


@pytest.mark.backends
def test_ctrl_c_while_the_model_thinks_returns_to_the_prompt_and_keeps_the_message(
    agent: Agent,
) -> None:
    agent.server.push(hang(300))
    child = agent.spawn("chat", "a slow question")
    agent.server.wait_for_request()
    child.sendintr()
    child.expect("interrupted")
    child.expect(PROMPT)
    assert agent.server.answered == 0  # back at once, not after the request
    agent.server.cut_hangs()  # the stopped run's request ends (an error, as a hang does)
    agent.server.push(text("Quick answer."))
    child.send("/retry\r")  # waits for the stopped run, then asks again
    child.expect("Quick answer.")
    assert agent.server.requests[-1]["messages"][-1]["content"] == "a slow question"
    child.expect(PROMPT)
    child.sendintr()
    child.expect("Ctrl-C again")
    child.sendintr()  # a second Ctrl-C in a row leaves
    ended(child, 130)
    assert child.exitstatus == 130 or child.signalstatus == 2


def _stopped_in_chat(agent: Agent, command: str) -> pexpect.spawn:
    """A chat whose approved shell call (`command`, which touches `started`) was stopped
    with Ctrl-C once it began: back at the prompt."""
    agent.server.push(tool_calls(("shell", {"command": command})))
    child = agent.spawn("chat", "-y", "run the slow thing")
    until((agent.workspace / "started").exists, what="the call started", process=child)
    child.sendintr()
    child.expect("interrupted")
    child.expect(PROMPT)
    return child


def test_exit_right_after_ctrl_c_waits_for_the_stopped_call_to_end(agent: Agent) -> None:
    """/exit at once after Ctrl-C stopped a command that takes a moment to stop: the chat
    waits for the run to end, so the call is over (told as interrupted), not cut off."""
    child = _stopped_in_chat(agent, 'trap "" TERM; touch started; sleep 31.7')  # only SIGKILL
    child.send("/exit\r")
    child.expect("waiting for the stopped run to end")
    ended(child, 0)
    [row] = json.loads(agent.run("threads", "list", "--json").stdout)
    assert row["status"] != "awaiting_approval", row
    assert json.loads(agent.run("review", row["thread_id"], "--json").stdout) == []
    exported = agent.run("threads", "export", row["thread_id"], "--format", "json").stdout
    [told] = [m for m in json.loads(exported)["messages"] if m["type"] == "tool"]
    assert "interrupted by the user (Ctrl-C)" in told["data"]["content"]


def test_ctrl_c_during_a_tool_stops_it_and_the_model_is_told(agent: Agent) -> None:
    child = _stopped_in_chat(agent, "touch started; sleep 301.5; touch done")
    agent.server.push(text("It was interrupted, so I stopped."))
    child.send("/retry\r")
    child.expect("It was interrupted, so I stopped.")
    result = agent.server.requests[-1]["messages"][-1]
    assert result["role"] == "tool" and "interrupted by the user (Ctrl-C)" in result["content"]
    sleeping = lambda: subprocess.run(["pgrep", "-f", "sleep 301.5"], capture_output=True)  # noqa: E731
    until(lambda: sleeping().returncode == 1, what="its process group was stopped")
    assert not (agent.workspace / "done").exists()
    leave(child)
