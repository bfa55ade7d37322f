"""Run async-only tools from the synchronous graph.

The agent graph runs synchronously: ToolNode calls `tool.invoke` in worker threads that have no
event loop. Tools that only have a coroutine (MCP tools, `async def` custom tools) get a `func`
that runs the coroutine to completion on a fresh loop in the calling thread.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from langchain_core.tools import BaseTool, StructuredTool

T = TypeVar("T")


def run_coroutine(awaitable: Awaitable[T]) -> T:
    """Run ``awaitable`` to completion; from a thread with a running loop, in another thread."""

    async def main() -> T:
        return await awaitable

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(main())
    with ThreadPoolExecutor(1, thread_name_prefix="agentcli-async") as pool:
        return pool.submit(asyncio.run, main()).result()


def sync_tool(tool: BaseTool) -> BaseTool:
    """``tool`` itself if it can run synchronously, else a copy whose ``func`` runs its coroutine.

    The copy keeps the name, description, schema, response format and error handling; the
    ``func`` carries the coroutine's signature, so LangChain passes it the same extra arguments
    (``config``, ``callbacks``, injected ones) it would pass the coroutine.
    """
    if not isinstance(tool, StructuredTool) or tool.func is not None or tool.coroutine is None:
        return tool
    coroutine = tool.coroutine

    @functools.wraps(coroutine)
    def func(*args: Any, **kwargs: Any) -> Any:
        return run_coroutine(coroutine(*args, **kwargs))

    return tool.model_copy(update={"func": func})
