"""An MCP server, built with FastMCP, whose tools misbehave the way real servers do.

    python tests/helpers/faulty_mcp_server.py              # stdio
    python tests/helpers/faulty_mcp_server.py --http PORT  # streamable HTTP on 127.0.0.1:PORT/mcp

`add` answers at once; `hang` never answers (it sleeps for a day); `die` kills the server
process mid-call (`os._exit(1)`), so the client sees the connection or pipe close with its
request unanswered. Each of `hang` and `die` first writes its process id to the file
named by `started`, if given, so a test can tell the call reached the server.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from mcp.server.fastmcp import FastMCP

server = FastMCP("agentcli-faulty", log_level="WARNING")


def _started(path: str) -> None:
    if path:
        Path(path).write_text(str(os.getpid()), encoding="utf-8")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def hang(started: str = "") -> str:
    """Never answer."""
    _started(started)
    time.sleep(86400)
    return "woke up"


@server.tool()
def die(started: str = "") -> str:
    """Kill the server in the middle of the call."""
    _started(started)
    os._exit(1)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        server.settings.host = "127.0.0.1"
        server.settings.port = int(sys.argv[2])
        server.run("streamable-http")
    else:
        server.run("stdio")
