"""What the tests share, and only the tests: the scripted model server and its profiles
(scripted_server.py, server_profiles.py, text_tool_calls.py), the fake chat model (fakes.py),
MCP servers, a private PostgreSQL (pg.py), a local `langgraph dev` (langgraph_dev.py), tools
called as the application calls them (tooling.py), what a terminal shows (terminal.py), undo's
attack fixtures (undo.py) and a state that snapshots often (state_schemas.py)."""

from pathlib import Path

HELPERS = Path(__file__).resolve().parent
ROOT = HELPERS.parents[1]  # the repository
MCP_SERVER = str(HELPERS / "mcp_server.py")
FAULTY_MCP_SERVER = str(HELPERS / "faulty_mcp_server.py")
ENV_MCP_SERVER = str(HELPERS / "env_mcp_server.py")
