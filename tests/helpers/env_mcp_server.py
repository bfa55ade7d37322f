"""An MCP stdio server for the secrets tests: `environment` answers with its whole environment,
and its start-up writes that environment to the file named by ENV_DUMP (if set) and, if
ENV_STDERR is set, to its stderr (its log), as it is and in base64."""

from __future__ import annotations

import base64
import os
import sys
from pathlib import Path

from mcp.server.fastmcp import FastMCP

server = FastMCP("agentcli-env", log_level="WARNING")


@server.tool()
def environment() -> str:
    """The server's environment, one NAME=value a line."""
    return "\n".join(f"{name}={value}" for name, value in sorted(os.environ.items()))


if __name__ == "__main__":
    if dump := os.environ.get("ENV_DUMP"):
        Path(dump).write_text(environment(), encoding="utf-8")
    if os.environ.get("ENV_STDERR"):
        print(environment(), file=sys.stderr)
        print(base64.encodebytes(environment().encode()).decode(), file=sys.stderr, flush=True)
    server.run("stdio")
