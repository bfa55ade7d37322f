"""The review at a terminal, as a person uses it: one key decides (no Enter), keys typed or
pasted before the review are never a decision, leaving a review in chat comes back to the
prompt with the calls waiting, and an edit is shown for approval before it runs."""

from __future__ import annotations

import json
import re
import sys
import threading
import time
from pathlib import Path

import pexpect
import pyte
import pytest

from tests.e2e.conftest import Agent
from tests.helpers.scripted_server import Reply, text, tool_calls
from tests.helpers.terminal import CHOICE, PROMPT, ended, leave
from tests.helpers.waiting import until

ROWS, COLS = 40, 120
WAITING = "1 call waiting for review"
EDITED_CHOICE = r"\[a\]pprove edited.*\[q\]uit >"


def write_call(path: str = "later.txt", content: str = "later\n") -> Reply:
    return tool_calls(("write_file", {"path": path, "content": content}))


def tool_contents(agent: Agent, request: int) -> dict[str, str]:
    messages = agent.server.requests[request]["messages"]
    return {m["tool_call_id"]: m["content"] for m in messages if m["role"] == "tool"}


def gated(agent: Agent, reply: Reply) -> threading.Event:
    """`reply` for the next request, sent only once the returned event is set: until then
    the chat waits for the model, and what the test types is typed ahead."""
    gate = threading.Event()
    served: list[bool] = []

    def respond(body: dict) -> Reply | None:
        if served:
            return None
        served.append(True)
        gate.wait(300)
        return reply

    agent.server.responders.append(respond)
    return gate


class Screen:
    """What a person sees: the chat's output fed to a terminal emulator."""

    def __init__(self, child: pexpect.spawn) -> None:
        child.setwinsize(ROWS, COLS)
        self.child = child
        self.screen = pyte.Screen(COLS, ROWS)
        self.stream = pyte.Stream(self.screen)

    def expect(self, pattern: str) -> list[str]:
        """Wait for `pattern`, then the screen's rows."""
        self.child.expect(pattern)
        self.stream.feed(self.child.before + self.child.after)
        return [row.rstrip() for row in self.screen.display]


# -- leaving a review (bug 5) ---------------------------------------------------------------


@pytest.mark.parametrize("key", ["q", "\x1b", "\x03"], ids=["q", "esc", "ctrl-c"])
def test_leaving_a_review_comes_back_to_the_prompt_and_review_decides_later(
    agent: Agent, key: str
) -> None:
    agent.server.push(write_call(), text("Done at last."))
    child = agent.spawn("chat", "write later.txt")
    child.expect(CHOICE)
    child.send(key)
    child.expect(WAITING)  # the header says the call waits
    child.expect("/review decides them")
    child.expect(PROMPT)
    assert child.isalive() and not (agent.workspace / "later.txt").exists()
    child.send("/review\r")
    child.expect("later.txt")
    child.expect(CHOICE)
    child.send("a")
    child.expect("Done at last.")
    leave(child)
    assert (agent.workspace / "later.txt").read_text() == "later\n"


def test_a_message_sent_while_calls_wait_is_their_feedback(agent: Agent) -> None:
    agent.server.push(write_call(), text("Fine, notes.txt it is."))
    child = agent.spawn("chat", "write later.txt")
    child.expect(CHOICE)
    child.send("q")
    child.expect(WAITING)
    child.expect(PROMPT)
    child.send("call it notes.txt instead\r")
    child.expect("1 waiting call rejected, your message as feedback")
    child.expect("Fine, notes.txt it is.")
    thread = leave(child)
    assert tool_contents(agent, 1) == {"call_1": "call it notes.txt instead"}
    assert not (agent.workspace / "later.txt").exists()
    shown = json.loads(agent.run("threads", "show", thread, "--json").stdout)
    assert shown["thread"]["status"] == "idle"  # nothing waits any more


def test_ctrl_d_at_a_review_leaves_with_the_call_waiting(agent: Agent) -> None:
    agent.server.push(write_call())
    child = agent.spawn("chat", "write later.txt")
    child.expect(CHOICE)
    child.sendeof()
    child.expect("calls are waiting for review")
    thread = ended(child)
    listed = json.loads(agent.run("review", thread, "--json").stdout)
    assert [call["tool"] for call in listed] == ["write_file"]


def test_q_at_the_review_resume_opens_with_comes_back_to_the_prompt(agent: Agent) -> None:
    agent.server.push(write_call())
    child = agent.spawn("chat", "write later.txt")
    child.expect(CHOICE)
    child.sendeof()
    thread = ended(child)
    agent.server.push(text("Written."))
    child = agent.spawn("resume", thread)
    child.expect(CHOICE)
    child.send("q")
    child.expect(WAITING)
    child.expect(PROMPT)
    child.send("/review\r")
    child.expect(CHOICE)
    child.send("a")
    child.expect("Written.")
    leave(child)
    assert (agent.workspace / "later.txt").exists()


# -- one key, and nothing typed ahead (bug 6) ------------------------------------------------


def test_one_key_decides_without_enter(agent: Agent) -> None:
    agent.server.push(write_call(), text("Wrote it."))
    child = agent.spawn("chat", "write later.txt")
    child.expect(CHOICE)
    child.send("a")  # no Enter
    child.expect("Wrote it.")
    leave(child)
    assert (agent.workspace / "later.txt").read_text() == "later\n"


def test_keys_typed_before_the_review_are_not_a_decision(agent: Agent) -> None:
    gate = gated(agent, write_call())
    agent.server.push(text("Not written, then."))
    child = agent.spawn("chat", "write later.txt")
    agent.server.wait_for_request()
    child.send("a\r")  # typed while the model was still answering: before the review
    child.send("A\r")
    gate.set()
    child.expect(CHOICE)
    child.send("r")
    child.expect("Not written, then.")
    leave(child)
    assert tool_contents(agent, 1) == {"call_1": "rejected by the user"}
    assert not (agent.workspace / "later.txt").exists()


@pytest.mark.parametrize(
    "pasted",
    ["\x1b[200~a\x1b[201~", "aaaa", "a\ra\r", "\x1b[200~a", "\x1b[A", "\x1ba"],
    ids=["bracketed", "burst", "lines", "paste-begun", "arrow", "alt-a"],
)
def test_a_paste_at_the_review_is_not_a_decision(agent: Agent, pasted: str) -> None:
    agent.server.push(write_call(), text("Not written, then."))
    child = agent.spawn("chat", "write later.txt")
    child.expect(CHOICE)
    child.send(pasted)
    child.expect("not a key press")
    child.expect(CHOICE)
    quiet_after_the_note()
    if pasted.endswith("a"):  # the rest of a paste begun before: still not a key
        child.send("\x1b[201~")
        child.expect("not a key press")
        child.expect(CHOICE)
        quiet_after_the_note()
    child.send("r")
    child.expect("Not written, then.")
    leave(child)
    assert not (agent.workspace / "later.txt").exists()
    assert tool_contents(agent, 1) == {"call_1": "rejected by the user"}


def quiet_after_the_note() -> None:
    """Until a key counts again: QUIET_S after the paste was read, which was before the
    note saying so showed (twice that, from when it showed)."""
    from agentcli.ui.review_keys import QUIET_S

    shown = time.monotonic()
    until(lambda: time.monotonic() - shown > 2 * QUIET_S, what="the paste's quiet time")


def test_ctrl_l_draws_the_review_again(agent: Agent) -> None:
    agent.server.push(write_call(), text("Wrote it."))
    child = agent.spawn("chat", "write later.txt")
    screen = Screen(child)
    screen.expect(CHOICE)
    child.send("\x0c")
    rows = screen.expect(CHOICE)
    assert sum(row.startswith("╭─ write_file") for row in rows) == 2, rows
    child.send("a")
    child.expect("Wrote it.")
    leave(child)


def test_without_a_terminal_answers_are_lines(agent: Agent) -> None:
    """Piped in, the choice is a line, as before (scripts drive the review this way)."""
    agent.server.push(write_call(), text("Wrote it."))
    done = agent.run("chat", "write later.txt", stdin="a\n/exit\n")
    assert done.returncode == 0, done.stderr
    assert "Wrote it." in done.stdout
    assert (agent.workspace / "later.txt").read_text() == "later\n"


# -- an edit is shown before it runs (bug 7) ------------------------------------------------


def editor_writing(tmp_path: Path, args: dict) -> str:
    editor = tmp_path / "editor.py"
    editor.write_text(
        f"import json, pathlib, sys\npathlib.Path(sys.argv[1]).write_text(json.dumps({args!r}))\n"
    )
    return f"{sys.executable} {editor}"


def test_an_edit_is_shown_as_a_diff_and_waits_for_approval(agent: Agent, tmp_path: Path) -> None:
    (agent.workspace / "later.txt").write_text("old\n")
    visual = editor_writing(tmp_path, {"path": "later.txt", "content": "edited\n"})
    agent.server.push(write_call(content="proposed\n"), text("Saved."))
    child = agent.spawn("chat", "write later.txt", env={"VISUAL": visual})
    screen = Screen(child)
    screen.expect(CHOICE)
    child.send("e")
    rows = screen.expect(EDITED_CHOICE)
    assert (agent.workspace / "later.txt").read_text() == "old\n"  # not run yet
    top = max(i for i, row in enumerate(rows) if row.startswith("╭─ write_file (edited)"))
    panel = "\n".join(rows[top:])
    assert re.search(r"-old", panel) and re.search(r"\+edited", panel), panel
    assert "proposed" not in panel
    child.send("a")
    child.expect("Saved.")
    leave(child)
    assert (agent.workspace / "later.txt").read_text() == "edited\n"


def test_rejecting_an_edited_call_runs_nothing(agent: Agent, tmp_path: Path) -> None:
    visual = editor_writing(tmp_path, {"path": "later.txt", "content": "edited\n"})
    agent.server.push(write_call(), text("Nothing then."))
    child = agent.spawn("chat", "write later.txt", env={"VISUAL": visual})
    child.expect(CHOICE)
    child.send("e")
    child.expect(EDITED_CHOICE)
    child.send("r")
    child.expect("Nothing then.")
    leave(child)
    assert not (agent.workspace / "later.txt").exists()
    assert tool_contents(agent, 1) == {"call_1": "rejected by the user"}


# -- what the panel says once (polish) --------------------------------------------------------


def test_the_call_is_shown_once_with_no_default_footer(agent: Agent) -> None:
    agent.server.push(tool_calls(("shell", {"command": "echo hi"})), text("Ran."))
    child = agent.spawn("chat", "say hi")
    screen = Screen(child)
    rows = screen.expect(CHOICE)
    assert not any("requires approval" in row or "by default" in row for row in rows), rows
    assert not any(row.startswith("→ shell") for row in rows), rows
    assert sum("echo hi" in row for row in rows) == 1, rows
    child.send("a")
    child.expect("Ran.")
    leave(child)


def test_an_allowed_call_is_still_said(agent: Agent) -> None:
    agent.server.push(tool_calls(("shell", {"command": "echo hi"})), text("Ran."))
    child = agent.spawn("chat", "-y", "say hi")
    child.expect(r"→ shell \{\"command\": \"echo hi\"\}")
    child.expect("Ran.")
    leave(child)


def test_the_inbox_names_each_thread_once(agent: Agent) -> None:
    agent.server.push(
        tool_calls(("shell", {"command": "echo one"}), ("shell", {"command": "echo two"}))
    )
    parked = agent.run("run", "go", "-o", "json")
    assert parked.returncode == 3, parked.stderr
    thread = json.loads(parked.stdout)["thread_id"]
    shown = agent.run("review").stdout.splitlines()
    assert sum(line.startswith(thread) for line in shown) == 1, shown
    assert [line.split()[1] for line in shown if line.startswith("  ")] == ["shell", "shell"]
