"""Where MCP stdio servers' stderr goes: a log file per server, never the terminal.

A stdio server inherits the stderr it is given; left as agentcli's own, its messages land in
the middle of the review screen. Each session instead gets a pipe, drained by a thread into
`$XDG_DATA_HOME/agentcli/logs/mcp-NAME.log` (agent/log_files.py: mode 0600, in a 0700
folder, rotated when a session starts with it over MAX_LOG_BYTES), and one session writes
at most MAX_LOG_BYTES into it: the rest is read and dropped, so a chatty server neither
blocks on a full pipe nor fills the disk. What is written passes the
process's redactor (agent/outbound.py): a server that prints its token does not log it.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import BinaryIO

from agentcli_tools.redacted_stream import RedactedStream
from agentcli_tools.redaction import Redactor

from agentcli.agent.log_files import MAX_LOG_BYTES, log_dir
from agentcli.agent.log_files import open_log as _open_log
from agentcli.agent.log_files import write_all as _write_all
from agentcli.agent.outbound import current

CHUNK = 65536


def log_path(server: str) -> Path:
    """The log file of server `server` (its name made safe for a file name)."""
    safe = re.sub(r"[^A-Za-z0-9_-]", "_", server)[:100] or "_"
    return log_dir() / f"mcp-{safe}.log"


@contextmanager
def server_stderr(server: str, what: str) -> Iterator[BinaryIO]:
    """A file to give a server process as its stderr; what it writes ends up in the log.

    `what` heads this session's lines in the log (e.g. "list tools", "call add"). If the
    log cannot be opened, the server's stderr is discarded: it never reaches the terminal.
    """
    try:
        log_fd = _open_log(log_path(server), MAX_LOG_BYTES)
    except OSError:
        log_fd = os.open(os.devnull, os.O_WRONLY | os.O_CLOEXEC)
    stamp = datetime.now(UTC).isoformat(timespec="seconds")
    _write_all(log_fd, f"--- {stamp} {what}\n".encode(errors="replace"))
    read_fd, write_fd = os.pipe()
    os.set_inheritable(read_fd, False)
    drain = threading.Thread(
        target=_drain, args=(read_fd, log_fd, current()), name=f"mcp-stderr-{server}", daemon=True
    )
    drain.start()
    writer = os.fdopen(write_fd, "wb", buffering=0)
    try:
        yield writer
    finally:
        writer.close()  # the drain ends once the server (and its children) close theirs too
        drain.join(timeout=1.0)


def _drain(read_fd: int, log_fd: int, redactor: Redactor) -> None:
    """Copy the pipe into the log, redacted, up to MAX_LOG_BYTES, then read and drop the rest."""
    written = dropped = 0
    log = RedactedStream(lambda text: _write_all(log_fd, text.encode(errors="replace")), redactor)
    try:
        while chunk := os.read(read_fd, CHUNK):
            room = MAX_LOG_BYTES - written
            if room > 0:
                log.add(chunk[:room])
                written += min(room, len(chunk))
            dropped += max(0, len(chunk) - max(room, 0))
        log.flush()
        if dropped:
            _write_all(log_fd, f"\n[agentcli: {dropped} more bytes dropped]\n".encode())
    except OSError:
        pass
    finally:
        os.close(read_fd)
        os.close(log_fd)
