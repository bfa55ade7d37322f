"""Issue 14, items 5, 6 and 8: the chat names the thread it is on; `run` and `review` refuse
what they would otherwise drop; a failed run names the thread it leaves; output for scripts
and logs is never wrapped or cut; usage errors are one line; resume shows the conversation."""

from __future__ import annotations

import json
import re
import signal

import pexpect
import pyte
import pytest

from tests.e2e.conftest import Agent
from tests.helpers.scripted_server import drop, error, hang, text, tool_calls
from tests.helpers.terminal import PROMPT, one_line

ROWS, COLS = 60, 120
CONFIG = "[model]\nmax_retries = 0\n"  # a failure fails at once


def threads(agent: Agent) -> list[dict]:
    return json.loads(agent.run("threads", "list", "--json").stdout)


class Screen:
    """A terminal emulator fed with everything the chat writes, read back as rows."""

    def __init__(self, child: pexpect.spawn) -> None:
        self.child = child
        child.setwinsize(ROWS, COLS)
        self.screen = pyte.Screen(COLS, ROWS)
        self.stream = pyte.Stream(self.screen)

    def expect(self, pattern: str) -> None:
        self.child.expect(pattern)
        self.stream.feed(self.child.before + self.child.after)

    def type(self, line: str) -> None:
        self.expect(PROMPT)
        self.child.send(line + "\r")

    def rows(self) -> list[str]:
        return [row.rstrip() for row in self.screen.display]

    def headers(self) -> list[str]:
        """The thread ids of the `thread ID · ...` header lines, top to bottom."""
        return [m[1] for row in self.rows() if (m := re.match(r"thread ([\w-]+) · ", row))]


# -- item 5: the chat's header, and what run and review refuse ----------------------------


def test_the_header_names_the_current_thread_after_new_and_switch(agent: Agent) -> None:
    agent.server.push(text("Hi."), text("Second."))
    chat = Screen(agent.spawn("chat"))
    chat.type("hello")
    chat.expect("Hi.")
    [first] = [row["thread_id"] for row in threads(agent)]
    assert chat.headers() == [first]
    chat.type("/new")
    chat.expect(r"thread [\w-]+ · new")
    chat.expect(PROMPT)
    after_new = chat.headers()[-1]
    assert after_new != first
    chat.child.send("second\r")
    chat.expect("Second.")
    [second] = [row["thread_id"] for row in threads(agent) if row["thread_id"] != first]
    assert after_new == second  # the header named the thread the message went to
    chat.type(f"/switch {first[:6]}")
    chat.expect("you: hello")  # the switched-to thread's last exchanges
    chat.expect(PROMPT)
    assert chat.headers()[-1] == first
    chat.child.sendeof()  # Ctrl-D names the same thread
    chat.expect(r"to continue: agentcli resume ([\w-]+)")
    assert chat.child.match.group(1) == first
    chat.child.expect(pexpect.EOF)


def test_a_message_for_a_parked_thread_is_refused_and_nothing_is_lost(agent: Agent) -> None:
    agent.server.push(tool_calls(("shell", {"command": "echo hi"})))
    parked = agent.run("run", "run echo", "-o", "json")
    assert parked.returncode == 3, parked.stderr
    thread = json.loads(parked.stdout)["thread_id"]
    before = agent.run("threads", "show", thread, "--json").stdout
    asked = len(agent.server.requests)

    refused = agent.run("run", "--thread", thread, "and then this")
    assert refused.returncode == 2
    line = one_line(refused.stderr)
    assert f"agentcli review {thread}" in line and "not sent" in line
    assert len(agent.server.requests) == asked  # nothing went to the model
    assert agent.run("threads", "show", thread, "--json").stdout == before  # nor the thread

    no_reject = agent.run("review", thread, "--message", "hi")
    assert no_reject.returncode == 2
    assert "--reject" in one_line(no_reject.stderr)
    assert agent.run("threads", "show", thread, "--json").stdout == before

    agent.server.push(text("Echoed."), text("Then this."))
    assert agent.run("review", thread, "--approve", "all").returncode == 0
    sent = agent.run("run", "--thread", thread, "and then this")  # decided: now it goes
    assert sent.returncode == 0, sent.stderr
    assert agent.server.requests[-1]["messages"][-1]["content"] == "and then this"


@pytest.mark.parametrize(
    ("args", "stdin"),
    [(("run", ""), ""), (("run", "  \n\t"), ""), (("run", "-"), ""), (("run", "-"), " \n \n")],
    ids=["empty", "blank", "stdin-empty", "stdin-blank"],
)
def test_an_empty_message_is_a_usage_error(agent: Agent, args: tuple, stdin: str) -> None:
    result = agent.run(*args, stdin=stdin)
    assert result.returncode == 2
    assert "message" in one_line(result.stderr)
    assert agent.server.requests == [] and threads(agent) == []


# -- item 6: scripts and logs -------------------------------------------------------------


FAILURES = {
    "500": error(500, "the server broke", type_="server_error"),
    "401": error(401, "Incorrect API key provided", code="invalid_api_key"),
    "dropped": drop(partial="Half an ans"),
}


@pytest.mark.parametrize("kind", FAILURES)
def test_a_failed_run_names_its_thread_in_every_format(agent: Agent, kind: str) -> None:
    config = agent.workspace / "c.toml"
    config.write_text(CONFIG)
    seen = []
    for output in ("text", "json", "jsonl"):
        agent.server.push(FAILURES[kind])
        failed = agent.run("run", f"keep this ({output})", "-o", output, "--config", str(config))
        assert failed.returncode == 1, failed.stderr
        line = one_line(failed.stderr)
        thread = next(r["thread_id"] for r in threads(agent) if output in r["title"])
        assert f"thread {thread} kept: agentcli run --thread {thread}" in line
        if output == "json":
            report = json.loads(failed.stdout)
            assert (report["thread_id"], report["status"]) == (thread, "error")
        elif output == "jsonl":
            events = [json.loads(x) for x in failed.stdout.splitlines()]
            assert events[0] == {"type": "start", "thread_id": thread, "new": True}
            assert events[-1]["type"] == "error" and events[-1]["thread_id"] == thread
        seen.append(thread)
    assert len(set(seen)) == 3


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_run_stopped_by_a_signal_names_its_thread(agent: Agent, signum: int) -> None:
    agent.server.push(hang(300))
    child = agent.start("run", "slow one", "-o", "json")
    agent.server.wait_for_request()
    child.send_signal(signum)
    stdout, stderr = child.communicate(timeout=120)  # not after the request: it hangs on
    assert child.returncode == 128 + signum
    [row] = threads(agent)
    thread = row["thread_id"]
    assert f"thread {thread} kept" in one_line(stderr)
    report = json.loads(stdout)
    assert (report["thread_id"], report["status"]) == (thread, "error")


def test_nothing_is_wrapped_or_cut_for_a_pipe(agent: Agent) -> None:
    """COLUMNS unset and stdout and stderr pipes: Rich would assume 80 columns."""
    del agent.env["COLUMNS"]
    long_path = "d" * 60 + "/" + "f" * 140 + ".txt"
    command = "echo " + "x" * 200
    agent.server.push(
        tool_calls(("read_file", {"path": long_path})),  # fails: its error shown whole
        tool_calls(("shell", {"command": command})),  # parks: the commands to copy
    )
    parked = agent.run("run", "go", "--approve", "read_file")
    assert parked.returncode == 3, parked.stderr
    thread = threads(agent)[0]["thread_id"]
    lines = parked.stderr.splitlines()
    error_line = next(line for line in lines if "f" * 140 in line)
    assert long_path in error_line  # the whole error, on one line
    assert any(command in line for line in lines)  # the pending call, on one line
    decide = next(line for line in lines if line.startswith("decide with: "))
    assert len(decide) > 80
    assert decide == (
        f"decide with: agentcli review {thread} --approve all"
        f"  (or: agentcli run --thread {thread} --auto-approve)"
    )


BAD_INVOCATIONS = [
    (("run", "--foo"), "No such option: --foo", "agentcli run --help"),
    (("undo",), "Missing argument 'ID'", "agentcli undo --help"),
    (("run", "-o", "xml", "hi"), "'xml' is not one of", "agentcli run --help"),
    (("threads", "nope"), "No such command 'nope'", "agentcli threads --help"),
    (("threads", "list", "-n", "many"), "'many' is not a valid int", "threads list --help"),
    (("--nope",), "No such option: --nope", "agentcli --help"),
    (("run", "one", "two"), "unexpected extra argument", "agentcli run --help"),
]


@pytest.mark.parametrize(("args", "says", "see"), BAD_INVOCATIONS, ids=range(len(BAD_INVOCATIONS)))
def test_usage_errors_are_one_line(agent: Agent, args: tuple, says: str, see: str) -> None:
    result = agent.run(*args)
    assert result.returncode == 2
    line = one_line(result.stderr)
    assert line.startswith("agentcli: error: ") and says in line and see in line
    assert result.stdout == ""


# -- item 8: resume shows the conversation --------------------------------------------------


def make_thread(agent: Agent, answer: str) -> str:
    """Four exchanges; the second's call approved at a review, the last answer hostile."""
    agent.server.push(text("answer one"))
    first = agent.run("run", "question one", "-o", "json")
    thread = json.loads(first.stdout)["thread_id"]
    agent.server.push(tool_calls(("read_file", {"path": "README.md"})))
    assert agent.run("run", "--thread", thread, "question two").returncode == 3
    agent.server.push(text("answer two"))
    assert agent.run("review", thread, "--approve", "all").returncode == 0
    for question, reply in (("question three", "answer three"), ("question four", answer)):
        agent.server.push(text(reply))
        assert agent.run("run", "--thread", thread, question).returncode == 0
    return thread


def test_resume_shows_the_last_exchanges_safely(agent: Agent) -> None:
    (agent.workspace / "README.md").write_text("read me\n")
    thread = make_thread(agent, "answer four \x1b[2J\x1b[H\x1b]0;title\x07 end")
    chat = Screen(agent.spawn("resume", thread[:6]))
    chat.expect(PROMPT)
    rows = chat.rows()
    shown = "\n".join(rows)
    assert f"1 earlier exchange not shown: agentcli threads show {thread}" in shown
    assert "you: question one" not in rows and "answer one" not in shown
    assert "  ▸ read_file path=README.md (approved)" in rows
    order = [shown.index(t) for t in ("question two", "answer two", "question three")]
    assert order == sorted(order)
    assert "you: question four" in rows
    # the escape codes are marks on the screen, not obeyed (the screen was not cleared)
    assert "assistant: answer four ⟦ESC⟧[2J⟦ESC⟧[H⟦ESC⟧]0;title⟦BEL⟧ end" in rows
    header = next(i for i, row in enumerate(rows) if row.startswith(f"thread {thread} · "))
    assert header < rows.index("you: question four")  # after the header, before the prompt
    chat.child.send("/exit\r")
    chat.child.expect(pexpect.EOF)


MARKDOWN = (
    "Here are **two** things:\n\n```python\nprint(1)\n```\n\n"
    "- a `shell` call\n- [docs](https://example.com) \x1b]0;title\x07 end"
)


@pytest.mark.parametrize("colour", [True, False])
def test_resume_renders_the_recaps_markdown_as_the_chat_does(agent: Agent, colour: bool) -> None:
    """At a colour terminal the recap's answers are Markdown, rendered as the chat renders
    them (no `**`, no fences, links with their address, escapes still marks); without
    colour they are the text as it came, as the chat's own answers are."""
    agent.server.push(text(MARKDOWN))
    done = agent.run("run", "show me", "-o", "json")
    thread = json.loads(done.stdout)["thread_id"]
    chat = Screen(agent.spawn("resume", thread, env={"NO_COLOR": "" if colour else "1"}))
    chat.expect(PROMPT)
    rows = chat.rows()
    shown = "\n".join(rows)
    assert "you: show me" in rows
    assert "⟦ESC⟧]0;title⟦BEL⟧ end" in shown and "title" not in chat.screen.title
    if colour:
        assert "assistant:" in rows and "Here are two things:" in shown
        assert "**" not in shown and "```" not in shown
        assert any(row.strip() == "print(1)" for row in rows), rows
        assert "• a shell call" in shown and "docs (https://example.com)" in shown
    else:
        assert "assistant: Here are **two** things:" in rows and "```python" in rows
    chat.child.send("/exit\r")
    chat.child.expect(pexpect.EOF)


def test_resume_warns_once_when_the_workspace_is_gone(agent: Agent) -> None:
    folder = agent.workspace / "project"
    folder.mkdir()
    agent.server.push(text("noted"))
    done = agent.run("run", "remember this", "-o", "json", "--workspace", str(folder))
    thread = json.loads(done.stdout)["thread_id"]
    folder.rmdir()
    child = agent.spawn("resume", thread)
    child.expect(r"agentcli: warning: ([^\r\n]*)\r\n")
    warning = child.match.group(1)
    assert f"the workspace {folder} of thread {thread} no longer exists" in warning
    assert "--workspace" in warning
    child.expect("you: remember this")
    child.expect(PROMPT)
    assert "no longer exists" not in child.before  # said once
    child.send("/exit\r")
    child.expect(pexpect.EOF)
