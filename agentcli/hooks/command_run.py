"""Running a command line of the person's: a hook, or `[notify] command`.

The command is run by a shell (`bash -c` when there is a bash, as Claude Code runs its hooks;
else `sh -c`), with the person's rights, in a session of its own: no controlling terminal
(stdin is the document it is given; stdout and stderr are read, never passed to the screen),
and, after `timeout` seconds, stopped with every process it started (its process group).

Its environment is the person's minus agentcli's secrets: `AGENTCLI_*` (the database URL may
hold a password), OPENAI_API_KEY, and any variable holding the model's key or the database
URL under another name.
"""

from __future__ import annotations

import fnmatch
import os
import shutil
import signal
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

NEVER_PASS = ("AGENTCLI_*", "OPENAI_API_KEY")
STOP_GRACE_S = 1.0  # after the timeout: how long the stopped command may take to go
MAX_OUTPUT = 1_000_000  # bytes of stdout and of stderr kept; the rest is dropped


@dataclass(frozen=True)
class Finished:
    """How a command ended: its status (None: it did not start, or was stopped), what it
    wrote, and why it failed to finish, if it did."""

    status: int | None
    stdout: str = ""
    stderr: str = ""
    failure: str | None = None  # "did not start: ...", "did not finish within N s: stopped"

    def said(self) -> str:
        """Its exit, and the last line of its stderr, for one line of a message."""
        if self.failure:
            return self.failure
        status = self.status or 0
        how = f"exited with status {status}" if status >= 0 else f"killed by signal {-status}"
        lines = self.stderr.strip().splitlines()
        return f"{how}: {lines[-1][:200]}" if lines else how


def person_environment(
    secrets: tuple[str | None, ...], environ: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The person's environment without agentcli's variables and without any variable whose
    value is one of `secrets` (the model's key, the database URL)."""
    environ = os.environ if environ is None else environ
    hidden = {value for value in (*secrets, environ.get("OPENAI_API_KEY")) if value}
    return {
        name: value
        for name, value in environ.items()
        if value not in hidden and not any(fnmatch.fnmatchcase(name, p) for p in NEVER_PASS)
    }


def run_command(
    command: str,
    stdin: bytes,
    env: dict[str, str],
    timeout: float,
    cwd: Path | None = None,
) -> Finished:
    """`command` by the shell, fed `stdin`, stopped after `timeout` seconds."""
    shell = shutil.which("bash", path=env.get("PATH")) or "/bin/sh"
    try:
        process = subprocess.Popen(
            [shell, "-c", command],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=cwd,
            start_new_session=True,  # no controlling terminal; one group to stop
        )
    except (OSError, ValueError) as exc:
        return Finished(None, failure=f"could not start: {exc}")
    try:
        out, err = process.communicate(stdin, timeout=timeout)
    except subprocess.TimeoutExpired:
        _stop(process)
        return Finished(None, failure=f"did not finish within {timeout:g} s: stopped")
    return Finished(process.returncode, _text(out), _text(err))


def _text(data: bytes) -> str:
    return data[:MAX_OUTPUT].decode("utf-8", "replace")


def _stop(process: subprocess.Popen[bytes]) -> None:
    """Kill the command and everything it started (its process group), then reap it."""
    try:
        if hasattr(os, "killpg"):
            os.killpg(process.pid, signal.SIGKILL)
        else:  # pragma: no cover - Windows
            process.kill()
    except OSError:  # already gone
        pass
    try:  # a child that left the group may still hold a pipe: do not wait for it long
        process.communicate(timeout=STOP_GRACE_S)
    except subprocess.TimeoutExpired:
        process.kill()
        for pipe in (process.stdout, process.stderr):
            if pipe:
                pipe.close()
        process.wait()
