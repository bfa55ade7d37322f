"""A command killed at a chosen moment: kill -9 of its whole process group (agentcli, its
tool supervisor, the commands it runs) once a file the test watches holds a text."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from typing import Any

from tests.helpers.waiting import NeverHappened, file_holds, until
from tests.helpers.warm_run import warm_popen

AGENTCLI = str(Path(sys.executable).parent / "agentcli")


def kill_when_logged(agent: Any, args: list[str], log: Path, text: str) -> None:
    """Run `agentcli ARGS` for `agent` (tests/e2e/conftest.Agent) in a session of its own
    (started warm: tests/helpers/warm_run.py), wait until `log` holds `text`, and SIGKILL the
    group. If the command exits first, the failure carries what it printed on stderr."""
    child = warm_popen([AGENTCLI, *args], env=agent.env, cwd=agent.workspace, session=True)
    try:
        until(file_holds(log, text), what=f"{log.name} holds {text!r}", process=child)
    except NeverHappened as never:
        _, printed = child.communicate(timeout=60)
        raise NeverHappened(f"{never}\nits stderr:\n{printed}") from None
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
        child.communicate(timeout=60)
