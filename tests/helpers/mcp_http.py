"""An MCP server script served over streamable HTTP on 127.0.0.1, for as long as a test needs."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from tests.helpers.ports import reserved_port
from tests.helpers.waiting import until


@contextmanager
def served(script: str) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """(its URL, its process) while `script --http PORT` runs; stopped afterwards."""
    port = reserved_port()
    process = subprocess.Popen(
        [sys.executable, script, "--http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        until(lambda: _accepts(port), what="the MCP server accepts connections", process=process)
        yield f"http://127.0.0.1:{port}/mcp", process
    finally:
        process.kill()
        process.wait(30)


def _accepts(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
    except OSError:
        return False
    return True
