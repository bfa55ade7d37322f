"""Ctrl-C in each state of the chat: streaming, at the prompt, at the review (pexpect)."""

from __future__ import annotations

import json
import time

import pexpect
import pyte

from tests.e2e.conftest import Agent
from tests.helpers.scripted_server import text, tool_calls
from tests.helpers.terminal import CHOICE, PROMPT, ended, leave

LONG = " ".join(f"word{i}" for i in range(400))  # 2,400 characters, 4 a piece


def test_ctrl_c_while_the_answer_streams_keeps_the_chat_and_the_text(agent: Agent) -> None:
    agent.server.push(text(LONG, delay=0.01))  # about 6 s to stream in full
    child = agent.spawn("chat", "tell me a long story")
    child.expect("word40 ")  # with about 5 s of the answer still to come
    child.sendintr()
    child.expect("the answer was stopped")
    child.expect(PROMPT)
    assert child.isalive()  # the chat stays
    agent.server.push(text("Second answer."))
    child.sendline("and then?")
    child.expect("Second answer.")
    thread = leave(child)
    shown = agent.run("threads", "show", thread, "--json")
    assert shown.returncode == 0, shown.stderr
    document = json.loads(shown.stdout)
    assert document["thread"]["status"] == "idle"
    first = document["entries"][1]
    assert first["role"] == "assistant" and first["interrupted"] is True
    assert first["text"].startswith("word0 word1 ") and "word40" in first["text"]
    assert "word399" not in first["text"] and first["calls"] == []
    # the model saw the stopped answer as the assistant's turn, then the new message
    sent = agent.server.requests[1]["messages"]
    assert [m["role"] for m in sent[-3:]] == ["user", "assistant", "user"]
    assert sent[-2]["content"] == first["text"]
    plain = agent.run("threads", "show", thread)
    assert "assistant (interrupted):" in plain.stdout


def test_a_stopped_answer_drops_its_half_streamed_tool_calls(agent: Agent) -> None:
    agent.server.push(
        tool_calls(
            ("write_file", {"path": "x.txt", "content": "x" * 400}), content=LONG[:600], delay=0.01
        )
    )
    child = agent.spawn("chat", "write it")
    child.expect("word20 ")
    child.sendintr()
    child.expect("the answer was stopped")
    thread = leave(child)
    document = json.loads(agent.run("threads", "show", thread, "--json").stdout)
    assert document["thread"]["status"] == "idle"
    assert document["entries"][-1]["calls"] == [] and document["entries"][-1]["interrupted"]
    assert not (agent.workspace / "x.txt").exists()
    # resume works on it: no call waits for a result
    agent.server.push(text("Resumed fine."))
    child = agent.spawn("resume", thread, "go on")
    child.expect("Resumed fine.")
    leave(child)
    assert [m["role"] for m in agent.server.requests[-1]["messages"][-3:]] == [
        "user",
        "assistant",
        "user",
    ]


def test_ctrl_c_at_the_prompt_clears_the_draft(agent: Agent) -> None:
    agent.server.push(text("Only this."))
    child = agent.spawn("chat")
    child.expect(PROMPT)
    child.send("a draft I do not want")
    child.expect("want")
    child.sendintr()  # the keys are read in order: this one clears the draft...
    child.sendintr()  # ...and this one clears nothing more, and says how to leave
    child.expect("Ctrl-C again")
    # the subject: a second press later than LEAVE_S (1 s) after the first was handled (the
    # hint says it was): the hint again, no exit. A busy machine only makes the gap longer
    time.sleep(1.2)
    child.sendintr()
    child.expect("Ctrl-C again")
    child.send("what\r")
    child.expect("Only this.")
    assert agent.server.requests[-1]["messages"][-1]["content"] == "what"  # draft gone
    leave(child)


def test_typing_between_two_ctrl_c_does_not_leave(agent: Agent) -> None:
    child = agent.spawn("chat")
    child.expect(PROMPT)
    child.sendintr()
    child.expect("Ctrl-C again")
    child.send("x")
    child.sendintr()  # clears the x
    child.sendintr()  # the first press of a new pair
    child.expect("Ctrl-C again")
    assert child.isalive()
    child.expect(PROMPT)
    child.sendline("/exit")  # no message sent: no thread, no resume hint
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_two_ctrl_c_on_an_empty_prompt_leave(agent: Agent) -> None:
    child = agent.spawn("chat")
    child.expect(PROMPT)
    child.sendintr()
    child.expect("Ctrl-C again")
    child.sendintr()
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130 or child.signalstatus == 2


def test_ctrl_c_at_the_review_is_quit_on_a_line_of_its_own(agent: Agent) -> None:
    """As `q`: back at the chat's prompt, the calls pending, nothing runs."""
    agent.server.push(tool_calls(("write_file", {"path": "w.txt", "content": "w"})))
    child = agent.spawn("chat", "write w.txt")
    child.expect(CHOICE)
    child.sendintr()
    child.expect("/review decides them")
    before = child.before
    leave(child)
    assert not (agent.workspace / "w.txt").exists()
    # what came after the prompt started on a line of its own (without the fix: " ^C")
    assert "\n" in before, repr(before)


def test_a_stopped_commands_output_stays_on_the_screen(agent: Agent) -> None:
    """Ctrl-C while a shell command runs: the lines it printed, shown live under the status
    line, stay on the screen once it is stopped (they are not wiped with the status)."""
    command = (  # its output holds a title-setting escape: a mark on the screen, kept too
        'for i in 1 2 3 4 5; do echo line$i; done; printf "bad\\033]0;t\\007end\\n";'
        ' echo re""ady; sleep 60'
    )
    agent.server.push(tool_calls(("shell", {"command": command})), text("unused"))
    child = agent.spawn("chat", "-y", "count", env={"NO_COLOR": ""})  # the live view
    child.setwinsize(40, 120)
    screen = pyte.Screen(120, 40)
    stream = pyte.Stream(screen)
    for pattern in ("ready", "interrupted", PROMPT):  # `ready`: it printed all and waits
        child.expect(pattern)
        stream.feed(child.before + child.after)
        if pattern == "ready":
            child.sendintr()
    rows = [row.rstrip() for row in screen.display]
    kept = "running shell: stopped; what it printed last:"
    assert kept in rows, rows
    at = rows.index(kept)
    expected = ["  line4", "  line5", "  bad⟦ESC⟧]0;t⟦BEL⟧end", "  ready"]
    assert rows[at + 1 : at + 5] == expected, rows
    assert screen.title == ""  # the escape was shown, never obeyed
    child.sendline("/exit")  # at the prompt seen above
    ended(child)
