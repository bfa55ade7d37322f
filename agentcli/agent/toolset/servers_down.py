"""MCP servers that could not be reached when this process loaded its tools, and why.

Their tools are not offered, but a model may still call one (it saw the tool earlier in a
resumed thread, or the person named it): the call is then answered with the server's name
and the reason it is down, instead of "unknown tool". Kept per process, as the tools are.
"""

from __future__ import annotations

_DOWN: dict[str, str] = {}  # server name -> why it could not be listed


def mark_down(server: str, reason: str) -> None:
    _DOWN[server] = reason


def mark_up(server: str) -> None:
    _DOWN.pop(server, None)


def down_server(tool: str) -> str | None:
    """Why the tool `tool` (named SERVER__name) is unavailable, when its server is down."""
    for server, reason in _DOWN.items():
        if tool.startswith(f"{server}__"):
            return (
                f"MCP server '{server}' is down ({reason}): its tools cannot be called in this"
                " session; do not retry them, tell the person"
            )
    return None
