"""The notify command: its document, its environment, and how it fails."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from types import SimpleNamespace

from agentcli.config import Settings
from agentcli.session.notify import (
    NotifyEvent,
    notify,
    notify_environment,
    pending_document,
    run_command,
)
from tests.helpers.waiting import until

KEY = "sk-live-key"


def test_the_environment_is_the_persons_without_agentclis_secrets() -> None:
    settings = Settings(api_key=KEY, db="postgresql://u:pw@db/x")
    environ = {
        "PATH": "/bin",
        "DISPLAY": ":0",
        "NTFY_TOKEN": "theirs",
        "OPENAI_API_KEY": "sk-env-key",
        "AGENTCLI_DB": "postgresql://u:pw@db/x",
        "AGENTCLI_MODEL": "m",
        "COPY_OF_KEY": KEY,
        "DB_AGAIN": "postgresql://u:pw@db/x",
        "ENV_KEY_AGAIN": "sk-env-key",
    }
    assert notify_environment(settings, environ) == {
        "PATH": "/bin",
        "DISPLAY": ":0",
        "NTFY_TOKEN": "theirs",
    }


def test_the_document_describes_the_thread_and_its_calls() -> None:
    row = SimpleNamespace(title="fix it", workspace="/w")
    session = SimpleNamespace(row=row, workspace=None, thread_id="t1", hint_flags="")
    pending = [
        {"id": "c1", "name": "shell", "args": {"command": "ls"}},
        {"id": "c2", "name": "shell", "args": {}, "rerun": "cut off", "waiting_since": "T0"},
    ]
    parked = NotifyEvent.PARKED
    document = pending_document(parked, session, pending, since="T1")  # type: ignore[arg-type]
    assert document == {
        "event": "awaiting_approval",
        "thread_id": "t1",
        "title": "fix it",
        "workspace": "/w",
        "pending": [
            {"call_id": "c1", "tool": "shell", "args": {"command": "ls"}, "waiting_since": "T1"},
            {
                "call_id": "c2",
                "tool": "shell",
                "args": {},
                "waiting_since": "T0",
                "rerun": "cut off",
            },
        ],
        "resume": "agentcli review t1",
    }


def test_no_command_runs_nothing_and_a_command_reads_the_document(tmp_path: Path) -> None:
    assert notify(Settings(), {"event": NotifyEvent.PARKED}) is None
    out = tmp_path / "told"
    settings = Settings(notify_command=f"cat > '{out}'")
    assert notify(settings, {"event": NotifyEvent.PARKED, "x": "é\x1b"}) is None
    assert json.loads(out.read_text()) == {"event": NotifyEvent.PARKED, "x": "é\x1b"}


def test_failures_are_one_line_each() -> None:
    env = {"PATH": "/usr/bin:/bin"}
    assert run_command("echo a >&2; echo b >&2; exit 4", b"", env, 5) == (
        "notify command exited with status 4: b"
    )
    assert run_command("kill -9 $$", b"", env, 5) == "notify command killed by signal 9"
    assert run_command("true", b"x" * 1_000_000, env, 5) is None  # it need not read stdin
    hang = f"sleep 300.{os.getpid()}"  # a name of its own, to look for afterwards
    assert run_command(f"{hang}; :", b"", env, 0.2) == (
        "notify command did not finish within 0.2 s: stopped"
    )
    gone = lambda: subprocess.run(["pgrep", "-f", hang], capture_output=True).returncode == 1  # noqa: E731
    until(gone, what="the command was stopped, not left running")
