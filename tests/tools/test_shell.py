"""shell: exit codes, output, timeouts that kill the whole process group, caps."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest
from agentcli_tools.shell import shell

from tests.helpers.waiting import ends, running, until

if TYPE_CHECKING:
    from tests.helpers.tooling import ToolEnv


def gone(pid: int) -> bool:
    """Until process ``pid`` is over (the commands here sleep far longer than the wait)."""
    return until(lambda: not running(pid), what=f"process {pid} was stopped")


def test_output_exit_code_and_workspace(tool_env: ToolEnv) -> None:
    (tool_env.workspace / "here.txt").write_text("")
    message = tool_env(shell, command="ls; echo oops >&2; exit 3")
    assert message.status == "error"  # the command failed: every reader shows it so
    assert message.content == "exit code 3\nhere.txt\noops\n"  # as it is, no "Error:"


@pytest.mark.parametrize(
    ("command", "first_line", "status"),
    [
        ("true", "exit code 0", "success"),
        ("false", "exit code 1", "error"),
        ("kill -9 $$", "exit code -9", "error"),  # a signal: bash itself killed
        ("sleep 5", "timed out after 0.3s", "error"),
    ],
)
def test_the_status_follows_how_the_command_ended(
    tool_env: ToolEnv, command: str, first_line: str, status: str
) -> None:
    message = tool_env(shell, command=command, timeout=0.3 if "sleep" in command else 10)
    assert message.content.split("\n")[0].startswith(first_line), message.content
    assert message.status == status


def test_stdin_is_empty(tool_env: ToolEnv) -> None:
    # were stdin left open, cat would wait for it until the time limit
    assert tool_env(shell, command="cat; read x || echo eof", timeout=60).content == (
        "exit code 0\neof\n"
    )


def test_no_output(tool_env: ToolEnv) -> None:
    assert tool_env(shell, command="true").content == "exit code 0\n(no output)"


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc to find the child")
def test_timeout_kills_the_process_group(tool_env: ToolEnv) -> None:
    pid_file = tool_env.workspace / "child.pid"
    command = f"sleep 300 & echo $! > {pid_file}; echo started; sleep 300"
    message = ends(
        lambda: tool_env(shell, command=command, timeout=1),
        what="the call returned at its time limit, not when its processes end",
    )
    assert message.content.startswith(
        "timed out after 1s: the command and its child processes were killed"
    )
    assert "started" in message.content
    assert gone(int(pid_file.read_text()))


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc to find the child")
def test_background_processes_do_not_outlive_the_command(tool_env: ToolEnv) -> None:
    pid_file = tool_env.workspace / "bg.pid"
    message = ends(
        lambda: tool_env(shell, command=f"sleep 300 & echo $! > {pid_file}; echo ok"),
        what="the call returned when its command ended, not when its background one does",
    )
    assert message.content.startswith("exit code 0 (background processes it left running")
    assert gone(int(pid_file.read_text()))


def test_default_timeout_comes_from_the_context(tool_env: ToolEnv) -> None:
    tool_env.context.shell_timeout = 0.5
    assert tool_env(shell, command="sleep 300").content.startswith("timed out after 0.5s")


def test_huge_output_keeps_head_and_tail(tool_env: ToolEnv) -> None:
    tool_env.context.max_output_chars = 2000
    message = tool_env(shell, command="seq 1 200000")
    lines = message.content.splitlines()
    assert len(message.content) <= 2000 + len("exit code 0\n")
    assert lines[0] == "exit code 0"
    assert lines[1] == "1"
    assert lines[-1] == "200000"
    total = len("".join(f"{n}\n" for n in range(1, 200001)))
    assert f"of {total} characters cut" in message.content


def test_bad_timeout_is_refused(tool_env: ToolEnv) -> None:
    message = tool_env(shell, command="true", timeout=0)
    assert message.status == "error" and "timeout must be" in message.content


def test_the_command_gets_a_scrubbed_environment(
    tool_env: ToolEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-unit-0123456789abcdef")
    monkeypatch.setenv("MY_TOOL_SETTING", "visible")
    monkeypatch.setenv("MY_OTHER_SETTING", "hidden")
    tool_env.context.env_passthrough = ("MY_TOOL_*",)
    content = tool_env(shell, command="env").content
    names = {line.split("=")[0] for line in content.splitlines()[1:]}
    assert "MY_TOOL_SETTING" in names and "PATH" in names
    assert not names & {"OPENAI_API_KEY", "MY_OTHER_SETTING"}


def test_output_is_redacted(tool_env: ToolEnv) -> None:
    from agentcli_tools.redaction import Redactor

    tool_env.context.redactor = Redactor({"DEMO_TOKEN": "tok-0123456789"})
    content = tool_env(shell, command="echo tok-0123456789; echo fine").content
    assert content == "exit code 0\n[redacted DEMO_TOKEN]\nfine\n"


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc to find the child")
def test_a_process_that_left_the_session_is_stopped_with_the_command(tool_env: ToolEnv) -> None:
    pid_file = tool_env.workspace / "escaped.pid"
    message = tool_env(
        shell,
        command=f"setsid -f sh -c 'echo $$ > {pid_file}; sleep 300'; "
        f"until [ -s {pid_file} ]; do sleep 0.01; done",  # until it has left
    )
    assert message.content.startswith("exit code 0 (background processes it left running")
    assert gone(int(pid_file.read_text()))


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc")
def test_the_supervising_process_is_told_before_the_command_starts(tool_env: ToolEnv) -> None:
    from agentcli_tools.process_tree import start_time

    told: list[tuple[int, str, bool]] = []
    ran = tool_env.workspace / "ran.txt"

    def on_process(pid: int, started: str) -> None:
        told.append((pid, started, ran.exists()))
        assert start_time(pid) == started  # alive, and that very process

    tool_env.context.on_process = on_process
    message = tool_env(shell, command=f"echo $PPID > {ran}")
    assert message.content == "exit code 0\n(no output)"
    ((pid, _, existed),) = told
    assert not existed and int(ran.read_text()) == pid  # bash's parent: the call supervisor


def test_a_command_whose_process_cannot_be_recorded_does_not_run(tool_env: ToolEnv) -> None:
    ran = tool_env.workspace / "ran.txt"

    supervisors: list[int] = []

    def on_process(pid: int, started: str) -> None:
        supervisors.append(pid)
        raise OSError("the journal is gone")

    tool_env.context.on_process = on_process
    message = tool_env(shell, command=f"touch {ran}")
    assert message.status == "error" and "the journal is gone" in message.content
    gone(supervisors[0])  # the process that would have started the command is over
    assert not ran.exists()
    tool_env.context.on_process = None
    assert tool_env(shell, command="echo fine").content == "exit code 0\nfine\n"
