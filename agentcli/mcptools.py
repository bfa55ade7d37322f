"""Tools from MCP servers, through langchain-mcp-adapters (the optional extra `agentcli[mcp]`).

Imported only when `[mcp.servers.NAME]` tables are configured. Each server is started (or
reached) once per process to list its tools; each call then opens its own short session, so
the tools run from the synchronous graph like any other (see agentcli.asyncbridge).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from typing import Any

from langchain_core.tools import BaseTool, StructuredTool, ToolException

from agentcli.asyncbridge import run_coroutine, sync_tool
from tools.output import cap_output

LIST_TIMEOUT = 30.0  # seconds for one server to start and list its tools
INSTALL_HINT = "pip install 'agentcli[mcp]'"
CLOSED = {"BrokenResourceError", "ClosedResourceError", "EndOfStream"}  # anyio's stream errors


def load_servers(
    servers: dict[str, dict[str, Any]],
    max_chars: int,
    warn: Callable[[str], None],
    env: dict[str, str] | None = None,
) -> list[tuple[str, BaseTool]]:
    """(server name, tool) for every tool of every server that answers; a warning for the rest."""
    try:
        import langchain_mcp_adapters.tools  # noqa: F401
    except ImportError:
        names = ", ".join(servers)
        warn(f"MCP servers ({names}) skipped: the MCP client is not installed: {INSTALL_HINT}")
        return []
    results = run_coroutine(_list_all(servers, env or {}))
    loaded: list[tuple[str, BaseTool]] = []
    for name, result in zip(servers, results, strict=True):
        if isinstance(result, BaseException):
            warn(f"MCP server '{name}' skipped: {_reason(result, servers[name])}")
            continue
        loaded.extend((name, _wrap(name, tool, max_chars)) for tool in result)
    return loaded


def connection(server: dict[str, Any], env: dict[str, str] | None = None) -> dict[str, Any]:
    """The adapter's connection for one validated [mcp.servers.NAME] table. A stdio server
    gets `env` (the tools' scrubbed environment: agentcli.secrets) plus its own env table."""
    if "url" in server:
        headers = server.get("headers")
        return {"transport": "streamable_http", "url": server["url"], "headers": headers}
    return {
        "transport": "stdio",
        "command": server["command"],
        "args": list(server.get("args", [])),
        "env": {**(env or {}), **server.get("env", {})},
    }


async def _list_all(
    servers: dict[str, dict[str, Any]], env: dict[str, str]
) -> list[list[BaseTool] | BaseException]:
    return await asyncio.gather(
        *(_list(name, server, env) for name, server in servers.items()), return_exceptions=True
    )


async def _list(name: str, server: dict[str, Any], env: dict[str, str]) -> list[BaseTool]:
    from langchain_mcp_adapters.tools import load_mcp_tools

    link = connection(server, env)
    listing = load_mcp_tools(None, connection=link, server_name=name)  # type: ignore
    try:
        return await asyncio.wait_for(listing, LIST_TIMEOUT)
    except TimeoutError:
        raise TimeoutError(f"no tool list within {LIST_TIMEOUT:g} s") from None


def _reason(error: BaseException, server: dict[str, Any]) -> str:
    """One line for why a server failed: the innermost error of an exception group."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    if isinstance(error, FileNotFoundError) and "command" in server:
        return f"cannot run command {server['command']!r}: not found"
    if type(error).__name__ in CLOSED or str(error) == "Connection closed":
        return "it exited or closed the connection"
    text = " ".join(str(error).split())
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def _wrap(server: str, tool: BaseTool, max_chars: int) -> BaseTool:
    """The adapter's async tool, named SERVER__tool, answering with capped text, callable sync."""
    if not isinstance(tool, StructuredTool) or tool.coroutine is None:
        raise TypeError(f"langchain-mcp-adapters gave an unexpected tool: {tool!r}")
    call_mcp = tool.coroutine

    async def call(**arguments: Any) -> tuple[Any, Any]:
        try:
            content, artifact = await call_mcp(**arguments)
        except ToolException:
            raise
        except Exception as exc:  # transport: the server died, or would not start
            raise ToolException(f"MCP server '{server}' failed: {_reason(exc, {})}") from exc
        return _as_text(content, max_chars), artifact

    def error(exc: ToolException) -> str:
        blocks = getattr(exc, "tool_content", None)
        text = _as_text(blocks, max_chars) if blocks else str(exc)
        return text if text.lower().startswith("error") else f"Error: {text}"

    name = re.sub(r"[^A-Za-z0-9_-]", "_", f"{server}__{tool.name}")
    return sync_tool(
        tool.model_copy(update={"name": name, "coroutine": call, "handle_tool_error": error})
    )


def _as_text(content: Any, max_chars: int) -> Any:
    """Text blocks joined into one capped string (plain text suits every server); else as is."""
    if isinstance(content, str):
        return cap_output(content, max_chars)
    if isinstance(content, list) and all(
        isinstance(b, dict) and b.get("type") == "text" for b in content
    ):
        return cap_output("\n".join(str(b.get("text", "")) for b in content), max_chars)
    return content
