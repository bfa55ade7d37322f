"""A command killed at a chosen moment: kill -9 of its whole process group (agentcli, its
tool supervisor, the commands it runs) once a file the test watches holds a text."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.helpers.waiting import file_holds, until

AGENTCLI = str(Path(sys.executable).parent / "agentcli")


def kill_when_logged(agent: Any, args: list[str], log: Path, text: str) -> None:
    """Run `agentcli ARGS` for `agent` (tests/e2e/conftest.Agent) in a session of its own,
    wait until `log` holds `text`, and SIGKILL the group."""
    child = subprocess.Popen(
        [AGENTCLI, *args],
        cwd=agent.workspace,
        env=agent.env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    until(file_holds(log, text), what=f"{log.name} holds {text!r}", process=child)
    os.killpg(child.pid, signal.SIGKILL)
    child.wait(60)
