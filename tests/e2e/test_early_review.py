"""`resume` draws a parked thread's review from the thread index before LangChain loads
(agentcli/cli/early_review.py), and a key pressed at it counts only once the thread's own
state draws the same: a preview forged in the store, or made stale by the config, is drawn
but never decides."""

from __future__ import annotations

import json
import signal
import sys
import termios
from pathlib import Path

import pexpect

from tests.e2e.conftest import AGENTCLI, Agent, slow_start
from tests.helpers.pty_spawn import Spawn
from tests.helpers.scripted_server import text, tool_calls
from tests.helpers.terminal import CHOICE, ended, leave

NOT_HELD = "what was drawn above is not what the thread waits on now"
# the installed command under an audit hook that says on the terminal when LangChain or
# LangGraph starts loading (an audit hook sees each module's import once, at its start)
LOADING = "@@langchain loading"
WITH_HOOK = f"""
import os, runpy, sys
said = []
def hook(event, args):
    if event == "import" and args[0].split(".")[0] in ("langchain_core", "langgraph"):
        if not said:
            said.append(args[0])
            os.write(2, b"\\r\\n{LOADING}\\r\\n")
sys.addaudithook(hook)
sys.argv = [{AGENTCLI!r}, *sys.argv[1:]]
runpy.run_path({AGENTCLI!r}, run_name="__main__")
"""


def hooked_resume(agent: Agent, thread: str) -> pexpect.spawn:
    """`agentcli resume THREAD` under WITH_HOOK, on a 40x120 terminal: LOADING shows when
    LangChain or LangGraph starts loading."""
    return Spawn(
        sys.executable,
        ["-c", WITH_HOOK, "resume", thread],
        env=agent.env,
        cwd=str(agent.workspace),
        encoding="utf-8",
        timeout=120,
        dimensions=(40, 120),
    )


def parked(agent: Agent, content: str = "real\n") -> str:
    """A thread parked at a review of one write_file of a.txt: its id."""
    agent.server.push(tool_calls(("write_file", {"path": "a.txt", "content": content})))
    result = agent.run("run", "write a.txt")
    assert result.returncode == 3, result.stderr
    store = agent.store()
    try:
        return store.recent(1)[0].thread_id
    finally:
        store.close()


def forge(agent: Agent, thread: str, content: str) -> None:
    """Rewrite the thread's preview in the store: the call drawn writes `content`."""
    store = agent.store()
    try:
        preview = json.loads(store.preview(thread) or "null")
        assert preview is not None, "the parked run kept no preview"
        preview["calls"][0]["args"]["content"] = content
        store.keep_preview(thread, json.dumps(preview))
    finally:
        store.close()


def test_the_panel_is_drawn_before_langchain_loads(agent: Agent) -> None:
    thread = parked(agent)
    child = hooked_resume(agent, thread)
    try:
        child.expect(CHOICE)
        shown = (child.before or "") + str(child.after)
        child.expect_exact(LOADING)  # the session is made while the person reads
    finally:
        child.close(force=True)
    assert "write_file" in shown and "+real" in shown, shown
    assert LOADING not in shown, shown


def test_a_key_pressed_at_once_decides_the_call(agent: Agent) -> None:
    thread = parked(agent)
    agent.server.push(text("Wrote it."))
    child = agent.spawn("resume", thread)
    child.expect(CHOICE)
    child.send("a")  # before the session is made: held, then taken
    child.expect("Wrote it.")
    assert leave(child) == thread
    assert (agent.workspace / "a.txt").read_text() == "real\n"
    assert NOT_HELD not in (child.before or "")


def test_a_forged_preview_is_drawn_but_its_key_is_never_used(agent: Agent) -> None:
    thread = parked(agent, "evil\n")
    forge(agent, thread, "harmless\n")
    config, go = slow_start(agent)
    child = agent.spawn("resume", "--config", str(config), thread)
    child.expect(r"\+harmless")
    child.expect(CHOICE)
    child.send("a")  # approves what was drawn: not what waits
    go.touch()  # the session is made once the key waits, unread: it is not held
    child.expect_exact(NOT_HELD)
    child.expect(r"\+evil")  # the call as it waits, drawn again
    child.expect(CHOICE)
    assert not (agent.workspace / "a.txt").exists()
    agent.server.push(text("Not written."))
    child.send("r")
    child.expect("Not written.")
    leave(child)
    assert not (agent.workspace / "a.txt").exists()
    audit = json.loads(agent.run("audit", "--thread", thread, "--json").stdout)
    assert [record["decision"] for record in audit] == ["rejected"], audit


def test_a_preview_the_config_made_stale_gives_way_to_the_policy(agent: Agent) -> None:
    thread = parked(agent)
    config = Path(agent.env["XDG_CONFIG_HOME"]) / "agentcli" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('[approval]\nallow = ["write_file"]\n')
    agent.server.push(text("Allowed by the config."))
    child = agent.spawn("resume", thread)
    child.expect(CHOICE)
    child.expect_exact(NOT_HELD)  # the policy decides it now: no key is asked for
    child.expect("Allowed by the config.")
    leave(child)
    assert (agent.workspace / "a.txt").read_text() == "real\n"


def test_ctrl_d_at_the_early_panel_leaves_the_call_waiting(agent: Agent) -> None:
    thread = parked(agent)
    child = agent.spawn("resume", thread)
    child.expect(CHOICE)
    child.sendeof()
    child.expect("calls are waiting for review")
    assert ended(child) == thread
    assert not (agent.workspace / "a.txt").exists()
    [row] = json.loads(agent.run("threads", "list", "--json").stdout)
    assert row["status"] == "awaiting_approval"


def test_a_preview_of_the_wrong_shape_gives_way_to_the_state(agent: Agent) -> None:
    """A preview agentcli never writes (a call's arguments not an object, a message not
    text) cannot stop the thread from resuming: what waits is drawn from the state."""
    thread = parked(agent)
    store = agent.store()
    try:
        wrong = {
            "earlier": 0,
            "entries": [{"role": "user", "text": 5, "calls": "x"}],
            "calls": [{"name": "write_file", "args": "not an object"}],
        }
        store.keep_preview(thread, json.dumps(wrong))
    finally:
        store.close()
    agent.server.push(text("Wrote it."))
    child = agent.spawn("resume", thread)
    child.expect_exact(NOT_HELD)
    child.expect(r"\+real")
    child.expect(CHOICE)
    child.send("a")
    child.expect("Wrote it.")
    leave(child)
    assert (agent.workspace / "a.txt").read_text() == "real\n"


def test_a_workspace_changed_in_the_index_while_the_session_is_made_is_not_held(
    agent: Agent, tmp_path: Path
) -> None:
    """The early panel diffs against the workspace the index gave; the session reads the
    index's row again. A store writer who moves the thread between the two reads must not
    have the key drawn at a new file's panel overwrite a file in the other workspace."""
    thread = parked(agent)
    other = tmp_path / "other"
    other.mkdir()
    (other / "a.txt").write_text("precious\n")
    child = hooked_resume(agent, thread)
    child.logfile_read = sys.stdout
    try:
        child.expect(r"\+real")  # a new file in agent.workspace: nothing removed
        child.expect(CHOICE)
        child.expect_exact(LOADING)  # the session is being made: its row not read yet
        store = agent.store()
        try:
            with store._transaction():  # as another process writing the store would
                store._execute(
                    "UPDATE agentcli_threads SET workspace = ? WHERE thread_id = ?",
                    (str(other), thread),
                )
        finally:
            store.close()
        child.send("a")  # at the panel drawn against agent.workspace
        child.expect_exact(NOT_HELD)
        child.expect(r"-precious")  # the call as it would run now, drawn again
        child.expect(CHOICE)
        assert (other / "a.txt").read_text() == "precious\n"
    finally:
        child.close(force=True)
    assert (other / "a.txt").read_text() == "precious\n"


def test_sigterm_while_the_session_is_made_gives_the_terminal_back(agent: Agent) -> None:
    """The held choice puts the terminal in cbreak mode without echo: a stop signal while
    the session is made must leave it as it was (the pty's modes, read from its master)."""
    thread = parked(agent)
    child = hooked_resume(agent, thread)
    try:
        child.expect(CHOICE)
        child.expect_exact(LOADING)
        held = termios.tcgetattr(child.child_fd)[3]
        assert not held & termios.ECHO, "the held choice is read unechoed"
        child.kill(signal.SIGTERM)
        child.expect(pexpect.EOF)
        modes = termios.tcgetattr(child.child_fd)[3]
    finally:
        child.close(force=True)
    for mode in (termios.ECHO, termios.ICANON, termios.ISIG):
        assert modes & mode, modes
    assert not (agent.workspace / "a.txt").exists()


def test_a_forged_second_call_drops_the_key_held_at_the_first(agent: Agent) -> None:
    """The first panel is drawn from the preview and the others from the state: a preview
    whose second call differs from the state's is not held either."""
    agent.server.push(
        tool_calls(
            ("write_file", {"path": "a.txt", "content": "one\n"}),
            ("write_file", {"path": "b.txt", "content": "evil\n"}),
        )
    )
    assert agent.run("run", "write two").returncode == 3
    store = agent.store()
    try:
        thread = store.recent(1)[0].thread_id
        preview = json.loads(store.preview(thread) or "null")
        preview["calls"][1]["args"]["content"] = "harmless\n"
        store.keep_preview(thread, json.dumps(preview))
    finally:
        store.close()
    config, go = slow_start(agent)
    child = agent.spawn("resume", "--config", str(config), thread)
    child.expect(r"\(1/2\)")
    child.expect(CHOICE)
    child.send("a")  # held at a panel whose review's second call is forged
    go.touch()
    child.expect_exact(NOT_HELD)
    child.expect(r"\(1/2\)")
    child.expect(CHOICE)
    child.send("a")
    child.expect(r"\(2/2\)")
    child.expect(r"\+evil")  # the state's second call, as it waits
    child.expect(CHOICE)
    child.send("q")
    leave(child)
    assert not (agent.workspace / "a.txt").exists()
    assert not (agent.workspace / "b.txt").exists()
