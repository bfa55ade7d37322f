"""A command killed at a chosen moment: kill -9 of its whole process group (agentcli, its
tool supervisor, the commands it runs) once a file the test watches holds a text."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from tests.helpers.waiting import NeverHappened, file_holds, until

AGENTCLI = str(Path(sys.executable).parent / "agentcli")


def kill_when_logged(agent: Any, args: list[str], log: Path, text: str) -> None:
    """Run `agentcli ARGS` for `agent` (tests/e2e/conftest.Agent) in a session of its own,
    wait until `log` holds `text`, and SIGKILL the group. If the command exits first, the
    failure carries what it printed on stderr."""
    with tempfile.TemporaryFile() as stderr:
        child = subprocess.Popen(
            [AGENTCLI, *args],
            cwd=agent.workspace,
            env=agent.env,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            start_new_session=True,
        )
        try:
            until(file_holds(log, text), what=f"{log.name} holds {text!r}", process=child)
        except NeverHappened as never:
            stderr.seek(0)
            printed = stderr.read().decode(errors="replace")
            raise NeverHappened(f"{never}\nits stderr:\n{printed}") from None
        finally:
            if child.poll() is None:
                os.killpg(child.pid, signal.SIGKILL)
            child.wait(60)
