"""A command on a terminal (tests/helpers/pty_spawn.py): a forced close ends it, however long
the killed process takes to exit."""

from __future__ import annotations

import sys

from tests.helpers.pty_spawn import Spawn

# Refuses SIGHUP and SIGINT, so that a forced close has to SIGKILL it; its 256 MB of touched
# memory take some milliseconds to unmap once it is killed.
HOLDS_ON = """
import signal
signal.signal(signal.SIGHUP, signal.SIG_IGN)
signal.signal(signal.SIGINT, signal.SIG_IGN)
held = b"x" * 2**28
print("holding", flush=True)
while True:
    signal.pause()
"""


def test_a_forced_close_waits_for_a_killed_command_to_end() -> None:
    child = Spawn(sys.executable, ["-c", HOLDS_ON], encoding="utf-8", timeout=120)
    child.expect("holding")
    # pexpect allows a killed process 0.1 s to be gone, and then raises "Could not
    # terminate the child"; a busy machine takes longer. None at all is allowed here.
    child.ptyproc.delayafterterminate = 0
    child.close(force=True)
    assert not child.isalive()
    assert child.signalstatus == 9
