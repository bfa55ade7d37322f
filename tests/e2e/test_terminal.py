"""The terminal experience: slash commands, input history, multi-line, rendering."""

from __future__ import annotations

import json
import subprocess
import time

import pexpect

from tests.e2e.conftest import AGENTCLI, Agent
from tests.helpers.installed import program
from tests.helpers.scripted_server import text, tool_calls
from tests.helpers.terminal import PROMPT, leave
from tests.helpers.waiting import NeverHappened, until


def typed(child: pexpect.spawn, line: str) -> None:
    """Type a line at the prompt and press Enter (a carriage return, as a terminal sends)."""
    child.expect(PROMPT)
    child.send(line + "\r")


def test_slash_commands(agent: Agent, tmp_path) -> None:
    config = tmp_path / "c.toml"
    config.write_text('[model.prices."other-model"]\ninput = 1000000\noutput = 2000000\n')
    agent.server.push(
        text("Hi there."), tool_calls(("shell", {"command": "echo ran"})), text("Done.")
    )
    child = agent.spawn("chat", "--config", str(config))
    typed(child, "/help")
    for name in ("/new", "/switch ID", "/undo", "/model NAME", "/approve TOOL", "/cost", "/export"):
        child.expect_exact(name)
    typed(child, "/model other-model")
    child.expect("model: other-model")
    typed(child, "hello")
    child.expect("Hi there.")
    child.expect(r"10 in · 5 out · \$20\.0000")  # priced from the config
    assert agent.server.requests[0]["model"] == "other-model"
    typed(child, "/approve shell")
    child.expect("shell is allowed for the rest of this thread")
    typed(child, "run it")
    child.expect("Done.")  # no review: allowed for this thread
    assert "ran" in agent.server.requests[2]["messages"][-1]["content"]
    typed(child, "/cost")
    child.expect(r"30 tokens in · 15 out · \$60\.0000")
    typed(child, "/history")
    child.expect(r"you: \S*hello")
    child.expect("shell allowed by person: always for this thread")
    typed(child, "/export notes.md")
    child.expect("wrote notes.md")
    typed(child, "/threads")
    child.expect(r"\* ([\w-]+)")
    first = child.match.group(1)
    typed(child, "/undo")
    child.expect(r"undone: now on ([\w-]+), forked from ([\w-]+)")
    assert child.match.group(2) == first
    typed(child, "/new")
    child.expect(r"thread ([\w-]+)\S* · new")
    typed(child, f"/switch {first[:6]}")
    child.expect(f"thread {first}")
    typed(child, "/nope")
    child.expect("unknown command /nope")
    typed(child, "/quit")
    child.expect(pexpect.EOF)
    assert "**You:**\n\n> hello\n" in (agent.workspace / "notes.md").read_text()
    threads = json.loads(agent.run("threads", "list", "--json").stdout)
    assert len(threads) == 2  # the thread and its /undo fork


def test_history_is_kept_across_sessions(agent: Agent) -> None:
    agent.server.push(text("One."), text("Two."))
    child = agent.spawn("chat")
    typed(child, "a message worth repeating")
    child.expect("One.")
    leave(child)
    child = agent.spawn("chat")
    child.expect(PROMPT)
    for shown in ("/exit", "a message worth repeating"):  # Up, Up: past "/exit" to the message
        child.send("\x1b[A")
        child.expect_exact(shown)  # the line shows it: the key was taken
    child.send("\r")
    child.expect("Two.")
    leave(child)
    assert agent.server.requests[1]["messages"][-1]["content"] == "a message worth repeating"


def test_multi_line_input(agent: Agent) -> None:
    agent.server.push(text("Got both lines."))
    child = agent.spawn("chat")
    child.expect(PROMPT)
    child.send("line one")
    child.send("\x1b\r")  # Esc then Enter: a new line, not send
    child.send("line two\r")
    child.expect("Got both lines.")
    leave(child)
    assert agent.server.requests[0]["messages"][-1]["content"] == "line one\nline two"


def test_plain_text_when_piped(agent: Agent) -> None:
    agent.env.pop("NO_COLOR")
    agent.server.push(tool_calls(("list_dir", {})), text("# Title\n\n**bold** and `code`"))
    result = agent.run("run", "list", "-y")
    assert result.returncode == 0, result.stderr
    assert "\x1b[" not in result.stdout + result.stderr
    assert result.stdout.strip() == "# Title\n\n**bold** and `code`"


def test_review_and_answer_render_in_80_columns(agent: Agent) -> None:
    program("tmux")
    long_command = (
        "find . -name '*.py' -newer setup.cfg -exec grep -l 'TODO' {} + | sort | head -n 20"
    )
    answer = "## Summary\n\n" + "The search found nothing to report in this workspace today. " * 3
    agent.server.push(tool_calls(("shell", {"command": long_command})), text(answer))
    env = {**agent.env, "TERM": "xterm-256color"}
    env.pop("NO_COLOR")
    env.pop("COLUMNS")  # the width is the terminal's
    session = f"agentcli-{time.monotonic_ns()}"
    # a tmux server of its own (-S): a developer's running server would give the session its
    # environment, not the test's
    tmux = ["tmux", "-S", str(agent.workspace.parent / "tmux.sock")]
    subprocess.run(
        [
            *tmux,
            "new-session",
            "-d",
            "-s",
            session,
            "-x",
            "80",
            "-y",
            "50",
            f"{AGENTCLI} chat 'look for TODOs'; sleep 30",
        ],
        env=env,
        cwd=agent.workspace,
        check=True,
    )
    try:
        screen = wait_for(tmux, session, "[q]uit >")
        panel = [line for line in screen.splitlines() if line and line[0] in "╭│╰"]
        assert panel and all(len(line) == 80 for line in panel), screen
        assert all(line.endswith(("╮", "│", "╯")) for line in panel), screen
        inside = " ".join(" ".join(line[1:-1].split()) for line in panel)
        assert "sort | head -n 20" in inside, screen  # the command, wrapped at blanks
        subprocess.run([*tmux, "send-keys", "-t", session, "a", "Enter"], check=True)
        screen = wait_for(tmux, session, PROMPT, after="Summary")
        body = screen[screen.index("Summary") :]
        words = " ".join(body.split())
        assert ("The search found nothing to report in this workspace today. " * 3).strip() in words
        assert all(len(line) <= 80 for line in screen.splitlines())
    finally:
        subprocess.run([*tmux, "kill-server"], check=False)


def wait_for(tmux: list[str], session: str, marker: str, after: str = "") -> str:
    """The pane's screen, once `marker` shows on it (after `after`, if given)."""
    seen = [""]

    def showing() -> str | None:
        screen = subprocess.run(
            [*tmux, "capture-pane", "-p", "-t", session], capture_output=True, text=True
        ).stdout
        seen[0] = screen
        found = marker in screen[screen.find(after) if after in screen else len(screen) :]
        return screen if found else None

    try:
        return until(showing, what=f"{marker!r} on the screen")
    except NeverHappened as exc:
        raise NeverHappened(f"{exc}:\n{seen[0]}") from None


def test_no_color_means_no_control_codes_from_the_answer(agent: Agent) -> None:
    agent.server.push(text("**plain** answer"))
    child = agent.spawn("chat", "hi")  # NO_COLOR=1 is set for every test
    child.expect("plain\\*\\* answer")
    before = child.before
    leave(child)
    assert "\x1b[1m" not in before and "\x1b[2m" not in before  # no bold, no dim
