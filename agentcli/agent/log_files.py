"""agentcli's log files: `$XDG_DATA_HOME/agentcli/logs/NAME.log`, where what the terminal
does not show is kept (an MCP server's stderr: toolset/mcp/logs.py; the raw text of a model
server's error agentcli recovered from: model/retries.py, `model.log`).

Each file is mode 0600 in a 0700 folder, never opened through a symlink, rotated (one
older copy, `.1`) when it is opened over MAX_LOG_BYTES. What `append` writes passes the
process's redactor (outbound.py), its controls made marks (a server's text never moves the
cursor of whoever reads the log). A log that cannot be written is skipped, never an error.
"""

from __future__ import annotations

import os
from contextlib import suppress
from datetime import UTC, datetime
from pathlib import Path

from agentcli.agent.outbound import current
from agentcli.config import data_dir
from agentcli.terminal_text import visible

MAX_LOG_BYTES = 1_000_000
MODEL_LOG = "model"  # the model server's errors that agentcli recovered from


def log_dir() -> Path:
    return data_dir() / "logs"


def open_log(path: Path, limit: int = MAX_LOG_BYTES) -> int:
    """The log's descriptor, appending; the folder made private, the file rotated if it
    is `limit` bytes or more."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    with suppress(OSError):  # a folder made by someone else stays theirs
        os.chmod(path.parent, 0o700)
    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(path, flags, 0o600)
    try:
        os.fchmod(fd, 0o600)
        if os.fstat(fd).st_size >= limit:
            os.replace(path, path.with_name(path.name + ".1"))
            os.close(fd)
            fd = os.open(path, flags, 0o600)
            os.fchmod(fd, 0o600)
    except OSError:
        os.close(fd)
        raise
    return fd


def write_all(fd: int, data: bytes) -> None:
    with suppress(OSError):
        while data:
            data = data[os.write(fd, data) :]


def append(name: str, heading: str, text: str) -> None:
    """`--- TIME heading` then `text` (redacted, at most MAX_LOG_BYTES), at the end of log
    `name`."""
    stamp = datetime.now(UTC).isoformat(timespec="seconds")
    entry = visible(current()(f"--- {stamp} {heading}\n{text[:MAX_LOG_BYTES]}\n"))
    try:
        fd = open_log(log_dir() / f"{name}.log")
    except OSError:
        return
    try:
        write_all(fd, entry.encode(errors="replace"))
    finally:
        os.close(fd)
