"""A command on a terminal of its own (pexpect), whose forced close waits for its end.

pexpect's `close(force=True)` sends SIGKILL, allows 0.1 s, and raises "Could not terminate
the child" if the process is still there: on a busy machine a killed process of agentcli's
size takes longer than that to exit. Here the end is waited for; SIGKILL cannot be refused.
"""

from __future__ import annotations

from typing import Any

import pexpect
import ptyprocess


class ReapedPty(ptyprocess.PtyProcess):
    def terminate(self, force: bool = False) -> bool:
        if super().terminate(force):
            return True
        if not force:
            return False
        try:
            self.wait_killed()
        except (OSError, ptyprocess.PtyProcessError):
            return False
        return True

    def wait_killed(self) -> None:
        self.wait()


class Spawn(pexpect.spawn):
    """pexpect.spawn on a ReapedPty."""

    def _spawnpty(self, args: list[bytes | str], **kwargs: Any) -> ReapedPty:
        return ReapedPty.spawn(args, **kwargs)
