"""`!command` at the chat prompt: a shell command the person runs, with no model and no
review (it is the person's own command, as in their terminal). Its output is shown, made
terminal-safe, and kept for the next message, which carries it to the model, fenced."""

from __future__ import annotations

import os
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.text import Text

from agentcli.session.attachments import shell_output
from agentcli.ui.safe_text import safe


@dataclass(frozen=True)
class ShellRun:
    command: str
    exit_code: int
    output: str  # stdout and stderr, interleaved

    def for_model(self) -> str:
        """The fenced block the next message carries."""
        return shell_output(self.command, self.exit_code, self.output)


def is_command(text: str) -> bool:
    """`!ls` is a command; `!` alone (or followed by spaces only) is not."""
    return text.startswith("!") and bool(text[1:].strip())


def run(command: str, cwd: Path) -> ShellRun:
    """Run `command` with the person's shell in `cwd`; Ctrl-C stops it and all it started."""
    shell = os.environ.get("SHELL") or "/bin/sh"
    process = subprocess.Popen(
        [shell, "-c", command],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own group: stopped whole, and Ctrl-C reaches us only
    )
    try:
        data, _ = process.communicate()
    except BaseException:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.wait()
        raise
    return ShellRun(command, process.returncode, data.decode("utf-8", errors="replace"))


def run_shown(console: Console, command: str, cwd: Path) -> ShellRun | None:
    """Run `command` (`run`) and show its output, made safe, and what happens to it; None
    if Ctrl-C stopped it (nothing is kept). OSError if it cannot start."""
    try:
        ran = run(command, cwd)
    except KeyboardInterrupt:
        console.print(Text("(stopped: nothing kept)", style="yellow"))
        return None
    if ran.output:
        console.print(safe(ran.output.rstrip("\n")))
    status = f"exit {ran.exit_code} · " if ran.exit_code else ""
    console.print(Text(f"({status}output kept: it goes with your next message)", "dim"))
    return ran
