"""Run tools exactly as LangGraph's ToolNode runs them in the application: for tests.

Use it from a test module with the root conftest's ``pytest_plugins`` and the ``tool_env``
fixture. The application never imports this module (it needs pytest).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from agentcli_tools.context import ToolContext
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import BaseTool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode


def run_tool(tool: BaseTool, args: dict[str, Any], context: ToolContext) -> ToolMessage:
    """Call ``tool`` with ``args`` through a one-node graph around a ToolNode; return its message.

    The ToolNode handles errors (``handle_tool_errors=True``) as the application's does, and the
    graph's context is ``context``, which is what the tools' ``runtime.context`` will be.
    """
    graph = StateGraph(MessagesState, context_schema=type(context))
    graph.add_node("tools", ToolNode([tool], handle_tool_errors=True))
    graph.add_edge(START, "tools")
    graph.add_edge("tools", END)
    call = {"name": tool.name, "args": args, "id": "call-1", "type": "tool_call"}
    request = AIMessage(content="", tool_calls=[call])
    result = graph.compile().invoke({"messages": [request]}, context=context)
    message = result["messages"][-1]
    assert isinstance(message, ToolMessage)
    return message


@dataclass
class ToolReply:
    """A tool message, with its text content typed as text."""

    content: str
    status: str
    message: ToolMessage


@dataclass
class ToolEnv:
    """A workspace and the context the tools see; calling it runs one tool call."""

    context: ToolContext

    @property
    def workspace(self) -> Path:
        return self.context.workspace

    def __call__(self, tool: BaseTool, **args: Any) -> ToolReply:
        message = run_tool(tool, args, self.context)
        assert isinstance(message.content, str), "built-in tools answer with text"
        return ToolReply(message.content, message.status, message)


@pytest.fixture
def tool_env(tmp_path: Path) -> ToolEnv:
    """A fresh workspace (a subfolder of tmp_path, so escapes have somewhere to go)."""
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    return ToolEnv(ToolContext(workspace=workspace))


def linked_workspace(tmp_path: Path) -> Path:
    """A workspace with a file in sub/, a link that leads outside (away) and one that stays
    inside (near)."""
    root = tmp_path / "work"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "a.txt").write_text("a\n")
    (tmp_path / "outside").mkdir()
    os.symlink(tmp_path / "outside", root / "away")
    os.symlink("sub", root / "near")
    return root


@contextmanager
def local_http(
    handler: type[BaseHTTPRequestHandler],
    wrap: Callable[[ThreadingHTTPServer], None] | None = None,
    port: int = 0,
) -> Iterator[ThreadingHTTPServer]:
    """A web server on 127.0.0.1 (a free port, or `port`) answering with ``handler``, in a
    thread; ``wrap`` may change it before it serves (e.g. TLS on its socket). Stopped at
    the end."""
    httpd = ThreadingHTTPServer(("127.0.0.1", port), handler)
    httpd.daemon_threads = True
    if wrap is not None:
        wrap(httpd)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield httpd
    finally:
        httpd.shutdown()
        httpd.server_close()
