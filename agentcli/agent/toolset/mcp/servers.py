"""Tools from MCP servers, through langchain-mcp-adapters (the optional extra `agentcli[mcp]`).

Imported only when `[mcp.servers.NAME]` tables are configured. Each server is started (or
reached) once per process to list its tools; each call then opens its own short session, so
the tools run from the synchronous graph like any other (see toolset/async_tools.py). A stdio
server's stderr goes to its log file (mcp/logs.py), never to the terminal; a result is
always text (mcp/results.py): images and other blobs are described, never sent. Every
exchange ends within its time limit, at Ctrl-C, or as soon as the server is gone
(mcp/call_guard.py); a server that cannot be listed is recorded as down
(toolset/servers_down.py), so a call to its tools is told why.

A stdio server is started confined by the `[sandbox]` setting, as a shell command is
(tools/confine.py as its launcher: it confines itself, then execs the server), with the
folder agentcli runs in as its workspace; where nothing can confine it, it does not start.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import shutil
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from agentcli_tools.private_temp import private_temp
from agentcli_tools.sandbox import Sandbox
from langchain_core.tools import BaseTool, StructuredTool, ToolException

from agentcli.agent.toolset.async_tools import run_coroutine, sync_tool
from agentcli.agent.toolset.mcp.call_guard import (
    DEFAULT_TIMEOUT,
    CallStopped,
    TimedOut,
    Watch,
    guarded,
)
from agentcli.agent.toolset.mcp.logs import server_stderr
from agentcli.agent.toolset.mcp.results import result_text
from agentcli.agent.toolset.servers_down import mark_down, mark_up
from agentcli.config.durations import parse_duration

if TYPE_CHECKING:
    from mcp import ClientSession

LIST_TIMEOUT = 30.0  # seconds for one server to start and list its tools
INSTALL_HINT = "pip install 'agentcli[mcp]'"
CLOSED = {"BrokenResourceError", "ClosedResourceError", "EndOfStream"}  # anyio's stream errors
# the SDK logs a server gone mid-session (its stream cut, its session not closed) itself;
# the model and the person are told by the call's error, so its logger never prints
logging.getLogger("mcp").addHandler(logging.NullHandler())
logging.getLogger("mcp").propagate = False


def load_servers(
    servers: dict[str, dict[str, Any]],
    max_chars: int,
    warn: Callable[[str], None],
    env: dict[str, str] | None = None,
    sandbox: Sandbox | None = None,
) -> list[tuple[str, BaseTool]]:
    """(server name, tool) for every tool of every server that answers; a warning for the rest."""
    try:
        import langchain_mcp_adapters.tools  # noqa: F401
    except ImportError:
        names = ", ".join(servers)
        warn(f"MCP servers ({names}) skipped: the MCP client is not installed: {INSTALL_HINT}")
        return []
    confined = {name: {**server, "sandbox": sandbox} for name, server in servers.items()}
    results = run_coroutine(_list_all(confined, env or {}))
    loaded: list[tuple[str, BaseTool]] = []
    for name, result in zip(servers, results, strict=True):
        if isinstance(result, BaseException):
            reason = _reason(result, servers[name])
            mark_down(name, reason)
            warn(f"MCP server '{name}' skipped: {reason}")
            continue
        mark_up(name)
        loaded.extend(
            (name, _wrap(name, confined[name], tool, max_chars, env or {})) for tool in result
        )
    return loaded


def connection(server: dict[str, Any], env: dict[str, str] | None = None) -> dict[str, Any]:
    """The adapter's connection for one validated [mcp.servers.NAME] table. A stdio server
    gets `env` (the tools' scrubbed environment: agentcli.agent.secrets) plus its own env table."""
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

    watch = Watch()

    async def listing() -> list[BaseTool]:
        async with _session(name, server, "list tools", env, watch) as session:
            return await load_mcp_tools(session)

    try:
        return await guarded(listing(), timeout=LIST_TIMEOUT, cancel=None, watch=watch)
    except TimedOut:
        raise TimeoutError(f"no tool list within {LIST_TIMEOUT:g} s") from None
    except CallStopped as stopped:
        raise ConnectionError(str(stopped)) from None


@asynccontextmanager
async def _session(
    name: str, server: dict[str, Any], what: str, env: dict[str, str], watch: Watch
) -> AsyncIterator[ClientSession]:
    """An initialised session with one server; a stdio server gets `env` (see connection)
    and its stderr goes to its log; an HTTP server's connections are watched by `watch`."""
    from langchain_mcp_adapters.sessions import create_session
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = connection(server, env)
    if params["transport"] != "stdio":
        params["httpx_client_factory"] = watch.factory
        async with create_session(params) as session:  # type: ignore[arg-type]
            await session.initialize()
            yield session
        return
    command, args, env = _confined(server.get("sandbox"), params)
    stdio = StdioServerParameters(command=command, args=args, env=env, cwd=params.get("cwd"))
    with server_stderr(name, what) as errlog:
        async with (
            stdio_client(stdio, errlog=errlog) as (read, write),  # type: ignore[arg-type]
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            yield session


def _confined(
    sandbox: Sandbox | None, params: dict[str, Any]
) -> tuple[str, list[str], dict[str, str]]:
    """The command line and environment that start a stdio server in the sandbox: behind
    tools/confine.py, with the private temp folder as TMPDIR (SandboxUnavailable when
    nothing here can confine it: it does not start)."""
    env = {key: _expanded(value) for key, value in params["env"].items()}
    if sandbox is None or not sandbox.confines:
        return params["command"], params["args"], env
    program = shutil.which(params["command"], path=env.get("PATH", os.defpath))
    if program is None:  # as the unconfined start would say it
        raise FileNotFoundError(params["command"])
    argv = sandbox.launcher(os.getcwd(), program, params["args"])
    return argv[0], argv[1:], {**env, "TMPDIR": private_temp()}


def _expanded(value: str) -> str:
    """`${VAR}` references expanded from agentcli's environment, as langchain-mcp-adapters
    does for the servers it starts itself; an unset variable is left as written."""
    return re.sub(r"\$\{([^}]+)\}", lambda m: os.environ.get(m.group(1), m.group(0)), value)


def call_timeout(server: dict[str, Any]) -> float:
    """A server's `timeout` (seconds, or a duration like "2m"; checked by the config)."""
    value = server.get("timeout", DEFAULT_TIMEOUT)
    return float(value) if isinstance(value, int | float) else parse_duration(value)


def _cancel() -> threading.Event | None:
    """The run's Ctrl-C event (RunContext.cancel), when called inside a graph run."""
    from langgraph.runtime import get_runtime

    try:
        runtime = get_runtime()
    except (RuntimeError, KeyError):  # called outside a run (a test, `agentcli tools`)
        return None
    event = getattr(getattr(runtime, "context", None), "cancel", None)
    return event if isinstance(event, threading.Event) else None


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


def _wrap(
    name: str, server: dict[str, Any], tool: BaseTool, max_chars: int, env: dict[str, str]
) -> BaseTool:
    """The adapter's tool, named SERVER__tool, calling the server in a session of its own and
    answering with capped text, callable synchronously."""
    if not isinstance(tool, StructuredTool) or tool.coroutine is None:
        raise TypeError(f"langchain-mcp-adapters gave an unexpected tool: {tool!r}")
    remote_name = tool.name

    timeout = call_timeout(server)

    async def call(**arguments: Any) -> tuple[str, Any]:
        failure: BaseException | None = None
        result: Any = None
        watch = Watch()

        async def exchange() -> Any:
            nonlocal failure
            try:  # the adapter's advice: the SDK's context managers may swallow an error
                async with _session(name, server, f"call {remote_name}", env, watch) as session:
                    try:
                        return await session.call_tool(remote_name, arguments)
                    except Exception as exc:
                        failure = exc
            except Exception as exc:  # transport: the server died, or would not start
                failure = failure or exc
            return None

        try:
            result = await guarded(exchange(), timeout=timeout, cancel=_cancel(), watch=watch)
        except CallStopped as stopped:
            raise ToolException(f"MCP server '{name}': {stopped}") from None
        if failure is not None or result is None:
            reason = _reason(failure, {}) if failure else "no answer"
            raise ToolException(f"MCP server '{name}' is down or failed: {reason}") from failure
        text = result_text(result.content, max_chars)
        if result.isError:
            raise ToolException(text or "the tool reported an error and said nothing more")
        structured = result.structuredContent
        return text, {"structured_content": structured} if structured is not None else None

    def error(exc: ToolException) -> str:
        text = str(exc)
        return text if text.lower().startswith("error") else f"Error: {text}"

    safe = re.sub(r"[^A-Za-z0-9_-]", "_", f"{name}__{tool.name}")
    return sync_tool(
        tool.model_copy(update={"name": safe, "coroutine": call, "handle_tool_error": error})
    )
