"""The person's terminal belongs to the person: a confined command (a shell call, an MCP
stdio server's tool) has no way to it. The chat runs in a real pty; the approved command
(tests/helpers/reach_terminal.py) tries every route with every payload: escape sequences
written to any terminal it can open, keystrokes pushed with TIOCSTI (and TIOCLINUX), a
terminal multiplexer's socket. None may arrive: the program reports no route that worked,
the bytes the chat's terminal received hold no payload, the keystrokes ran nothing and
decided nothing (the next review is decided by the person), and a private tmux server's
pane never shows them.
"""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pyte
import pytest
from agentcli_tools.sandbox import mechanism

from tests.e2e.conftest import Agent
from tests.helpers import MCP_SERVER
from tests.helpers.installed import program
from tests.helpers.scripted_server import text, tool_calls
from tests.helpers.terminal import CHOICE, leave

pytestmark = pytest.mark.skipif(not mechanism()[0], reason="neither Landlock nor bubblewrap")

REACH = str(Path(__file__).parents[1] / "helpers" / "reach_terminal.py")
MARK = "REACH" + uuid.uuid4().hex[:8]
# what an attacker writes to a terminal, or types into it; each carries MARK
PAYLOADS = [
    {"kind": "write", "text": f"\x1b]0;{MARK} title\x07"},  # the window title
    {"kind": "write", "text": f"\x1b]2;{MARK} title\x1b\\"},
    {"kind": "write", "text": "\x1b]52;c;" + "UkVBQ0g=" + f"\x07{MARK}"},  # the clipboard
    {"kind": "write", "text": f"\x1b[2J\x1b[H{MARK} cleared"},  # a cleared screen
    {"kind": "write", "text": f"\x1b[?1049h{MARK} alternate screen"},
    {"kind": "write", "text": f"\x1b]8;;https://evil.example/\x1b\\{MARK}\x1b]8;;\x1b\\"},
    {"kind": "write", "text": f"\x1b[201~{MARK} out of a paste"},
    {"kind": "write", "text": f"\x1b[8m{MARK} hidden"},
    {"kind": "write", "text": f"\x1bP+q{MARK}\x1b\\"},  # a terminfo query (DCS)
    {"kind": "write", "text": f"\x1b[21t\x1b]l{MARK}\x1b\\"},  # report the title
    {"kind": "keys", "text": f"!touch {MARK}-bang\r"},  # the chat's unreviewed `!`
    {"kind": "keys", "text": "u\r"},  # the next review: unconfined once
    {"kind": "keys", "text": "a\r"},
    {"kind": "keys", "text": f"/exit\r{MARK}\r"},
    {"kind": "keys", "text": "\x03"},  # Ctrl-C
]


@pytest.fixture
def tmux_pane() -> Iterator[str | None]:
    """A tmux server of this test's own (never the developer's: its own socket name),
    whose one pane a multiplexer route would type into; None without tmux."""
    tmux = shutil.which("tmux")
    if tmux is None:
        yield None
        return
    name = f"agentcli-reach-{uuid.uuid4().hex[:8]}"
    command = [tmux, "-L", name, "-f", "/dev/null"]
    subprocess.run([*command, "new-session", "-d", "-x", "80", "-y", "10", "cat"], check=True)
    yield name
    subprocess.run([*command, "kill-server"], check=False)


def pane(name: str) -> str:
    command = ["tmux", "-L", name, "-f", "/dev/null", "capture-pane", "-p"]
    return subprocess.run(command, capture_output=True, text=True, check=True).stdout


def received(log: io.StringIO) -> pyte.Screen:
    screen = pyte.Screen(120, 40)
    pyte.Stream(screen).feed(log.getvalue())
    return screen


def nothing_arrived(agent: Agent, log: io.StringIO, tmux: str | None) -> None:
    assert MARK not in log.getvalue(), "a payload reached the chat's terminal"
    assert MARK not in received(log).title
    assert not list(agent.workspace.glob(f"{MARK}*"))
    assert not list(Path(agent.env["HOME"]).glob(f"{MARK}*"))
    if tmux is not None:
        assert MARK not in pane(tmux)


def tool_results(agent: Agent) -> list[str]:
    """The tool results in the thread, as the last model request carried them."""
    return [m["content"] for m in agent.server.requests[-1]["messages"] if m["role"] == "tool"]


# the default where the kernel allows it; the fallbacks with -m slow (`bash .ci/slow`)
MECHANISMS = [
    pytest.param("", id="namespaces"),
    pytest.param("userns", id="landlock-only", marks=pytest.mark.slow),
    pytest.param("landlock", id="bubblewrap", marks=pytest.mark.slow),
]


@pytest.mark.parametrize("missing", MECHANISMS)
def test_an_approved_command_cannot_reach_the_chats_terminal(
    agent: Agent, tmux_pane: str | None, missing: str
) -> None:
    if missing == "landlock":
        program("bwrap", "bubblewrap")
    if missing != "landlock" and mechanism()[0] != "landlock":
        pytest.skip("no Landlock here")
    agent.env["AGENTCLI_TEST_SANDBOX_MISSING"] = missing
    payloads = agent.workspace / "payloads.json"
    payloads.write_text(json.dumps(PAYLOADS))
    shutil.copy(REACH, agent.workspace / "reach.py")  # the workspace's: /tmp is private
    agent.server.push(
        tool_calls(("shell", {"command": f"{sys.executable} reach.py payloads.json"})),
        tool_calls(("shell", {"command": "echo the next call"})),
        text("done"),
    )
    log = io.StringIO()
    child = agent.spawn("chat", "go")
    child.logfile_read = log
    child.expect(CHOICE)
    child.sendline("a")
    child.expect(r"echo the next call")
    child.expect(CHOICE)  # what TIOCSTI typed would decide this one: the person does
    child.sendline("r")
    child.expect("done")
    thread = leave(child)
    first, second = tool_results(agent)[:2]
    assert first.startswith("exit code 0"), first
    assert json.loads(first.split("\n", 1)[1]) == [], first
    assert second == "rejected by the user"
    nothing_arrived(agent, log, tmux_pane)
    shown = json.loads(agent.run("threads", "show", thread, "--json").stdout)
    decisions = [
        (call["decision"]["decision"], call["decision"]["who"], call["decision"].get("sandbox"))
        for entry in shown["entries"]
        for call in entry.get("calls", [])
    ]
    assert [d[:2] for d in decisions] == [("approved", "person"), ("rejected", "person")], decisions
    assert all(sandbox != "off (unconfined once)" for *_, sandbox in decisions), decisions


def test_an_mcp_stdio_server_cannot_reach_the_chats_terminal(
    agent: Agent, tmux_pane: str | None
) -> None:
    config = Path(agent.env["XDG_CONFIG_HOME"]) / "agentcli" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(
        f"[mcp.servers.t]\ncommand = {json.dumps(sys.executable)}\nargs = ['{MCP_SERVER}']\n"
    )
    payloads = agent.workspace / "payloads.json"
    payloads.write_text(json.dumps(PAYLOADS))
    agent.server.push(tool_calls(("t__reach", {"payloads_file": str(payloads)})), text("done"))
    log = io.StringIO()
    child = agent.spawn("chat", "--approve", "t__reach", "go")
    child.logfile_read = log
    child.expect("done")
    leave(child)
    [result] = tool_results(agent)
    assert json.loads(result) == [], result
    nothing_arrived(agent, log, tmux_pane)
