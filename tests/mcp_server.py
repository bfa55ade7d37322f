"""A tiny MCP server for tests, built with the `mcp` package's FastMCP.

    python tests/mcp_server.py                 # stdio (what `[mcp.servers.NAME] command` runs)
    python tests/mcp_server.py --http PORT     # streamable HTTP on 127.0.0.1:PORT/mcp

`add` adds two integers; `mark` writes a marker file, so a test can tell that a call ran.
"""

from __future__ import annotations

import sys
from pathlib import Path

from mcp.server.fastmcp import FastMCP

server = FastMCP("agentcli-test", log_level="WARNING")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def mark(path: str, text: str = "ran") -> str:
    """Write text to a marker file at an absolute path."""
    Path(path).write_text(text, encoding="utf-8")
    return f"wrote {path}"


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        server.settings.host = "127.0.0.1"
        server.settings.port = int(sys.argv[2])
        server.run("streamable-http")
    else:
        server.run("stdio")
