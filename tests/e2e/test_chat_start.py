"""The chat's prompt comes before the session is made (issue 8): what must still hold."""

from __future__ import annotations

import pexpect

from tests.e2e.conftest import Agent, slow_start
from tests.helpers.scripted_server import text, tool_calls
from tests.helpers.terminal import CHOICE, PROMPT, leave


def test_a_message_typed_at_once_waits_for_the_session(agent: Agent) -> None:
    agent.server.push(text("Hello from the model."))
    child = agent.spawn("chat")
    child.expect(PROMPT)
    child.sendline("hi")  # typed before LangChain has finished loading
    child.expect("Hello from the model.")
    leave(child)
    assert agent.server.requests[0]["messages"][-1]["content"] == "hi"


def test_a_session_that_cannot_be_made_ends_the_prompt(agent: Agent) -> None:
    broken = agent.workspace / "broken_tools.py"  # found only when the tools are loaded
    broken.write_text("raise RuntimeError('no tools today')\n")
    config = agent.workspace / "config.toml"
    config.write_text(f"[tools]\nmodules = ['{broken}']\n")
    child = agent.spawn("chat", "--config", str(config))
    child.expect(PROMPT)  # nothing typed: the error still comes, and the exit code
    child.expect("agentcli: error: .*cannot import .*no tools today")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 2


def test_a_flag_naming_no_tool_is_refused_before_the_prompt(agent: Agent) -> None:
    child = agent.spawn("chat", "--approve", "nope")
    child.expect("agentcli: error: --approve nope: no tool is named 'nope'")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 2 and PROMPT not in (child.before or "")


def test_calls_the_index_did_not_know_of_are_shown_before_the_message(agent: Agent) -> None:
    agent.server.push(tool_calls(("write_file", {"path": "a.txt", "content": "x\n"})))
    parked = agent.run("run", "write a.txt", "-o", "json")
    assert parked.returncode == 3, parked.stderr
    store = agent.store()
    thread = store.recent(1)[0].thread_id
    store.update(thread, status="idle")  # as a crash between the save and the index could
    store.close()
    agent.server.push(text("Written."), text("And hello."))
    child = agent.spawn("resume", thread)
    child.expect(PROMPT)
    child.sendline("hello")
    child.expect("write_file")  # the pending call first, then the new message
    child.expect(CHOICE)
    child.sendline("a")
    child.expect("Written.")
    child.expect("And hello.")
    leave(child)
    assert (agent.workspace / "a.txt").read_text() == "x\n"
    assert agent.server.requests[-1]["messages"][-1]["content"] == "hello"


def test_ctrl_c_while_the_session_is_made_returns_to_the_prompt(agent: Agent) -> None:
    config, go = slow_start(agent)
    agent.server.push(text("Now I am here."))
    agent.env.pop("NO_COLOR")  # the live status line, which says what the chat waits for
    child = agent.spawn("chat", "--config", str(config))
    child.expect(PROMPT)
    child.sendline("are you there?")
    child.expect("starting")  # the module is still loading: the chat waits for the session
    child.sendintr()
    child.expect("interrupted while agentcli was starting: nothing sent")
    child.expect("your message is back at the prompt")  # to edit or send again
    child.expect(PROMPT)
    child.expect(r"are you there\?")
    go.touch()
    child.send("\x15")  # Ctrl-U: the line cleared
    child.sendline("and now?")
    child.expect("Now I am here.")
    leave(child)
    assert [r["messages"][-1]["content"] for r in agent.server.requests] == ["and now?"]


def test_the_command_lines_message_is_echoed_and_kept_on_ctrl_c_at_start(agent: Agent) -> None:
    """`agentcli chat "are you there?"`: the message shows as the person's, as if typed;
    Ctrl-C while the session is still being made sends nothing and puts the message back
    at the prompt, where Enter sends it."""
    config, go = slow_start(agent)
    agent.server.push(text("Yes, here."))
    agent.env.pop("NO_COLOR")  # the live status line, which says what the chat waits for
    child = agent.spawn("chat", "--config", str(config), "are you there?")
    child.expect(r"you> are you there\?")
    child.expect("starting")
    child.sendintr()
    child.expect("interrupted while agentcli was starting: nothing sent")
    child.expect(r"your message is back at the prompt")
    child.expect(PROMPT)
    child.expect(r"are you there\?")  # the prompt starts with it
    go.touch()
    child.sendline("")  # Enter sends it as it is
    child.expect("Yes, here.")
    leave(child)
    assert [r["messages"][-1]["content"] for r in agent.server.requests] == ["are you there?"]


def test_leaving_while_the_session_is_made_waits_for_it_and_says_so(agent: Agent) -> None:
    """The start-up thread is let finish before the chat leaves: stopped by the
    interpreter's exit inside native code, it aborted the process (SIGABRT). A start-up
    that takes a while (here a tools module waiting for the test) is said, not silent."""
    go = agent.workspace / "go"
    slow = agent.workspace / "slow_tools.py"
    slow.write_text(
        f"import os, time\nwhile not os.path.exists({str(go)!r}):\n    time.sleep(0.05)\n"
    )
    config = agent.workspace / "config.toml"
    config.write_text(f"[tools]\nmodules = ['{slow}']\n")
    child = agent.spawn("chat", "--config", str(config))
    child.expect(PROMPT)
    child.sendline("/exit")
    child.expect("finishing agentcli's start-up before leaving")
    assert child.isalive()
    go.touch()
    child.expect(pexpect.EOF)
    child.close()
    assert (child.exitstatus, child.signalstatus) == (0, None)
