"""What the tests share: the scripted model server, the fake chat model, MCP servers, a private
PostgreSQL, a local `langgraph dev`, and ways to call a tool as the application does."""

from pathlib import Path

HELPERS = Path(__file__).resolve().parent
ROOT = HELPERS.parents[1]  # the repository
MCP_SERVER = str(HELPERS / "mcp_server.py")
ENV_MCP_SERVER = str(HELPERS / "env_mcp_server.py")
