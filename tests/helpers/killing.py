"""A command killed at a chosen moment: kill -9 of its whole process group (agentcli, its
tool supervisor, the commands it runs) once a file the test watches holds a text."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

AGENTCLI = str(Path(sys.executable).parent / "agentcli")


def kill_when_logged(
    agent: Any, args: list[str], log: Path, text: str, settle: float = 0.0
) -> None:
    """Run `agentcli ARGS` for `agent` (tests/e2e/conftest.Agent) in a session of its own,
    wait until `log` holds `text` (then `settle` seconds more), and SIGKILL the group."""
    child = subprocess.Popen(
        [AGENTCLI, *args],
        cwd=agent.workspace,
        env=agent.env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 30
    while text not in (log.read_text() if log.exists() else ""):
        assert time.monotonic() < deadline and child.poll() is None, f"{text!r} never logged"
        time.sleep(0.05)
    time.sleep(settle)
    os.killpg(child.pid, signal.SIGKILL)
    child.wait(10)
