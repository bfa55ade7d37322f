"""What every built-in tool shares: the error type, the runtime type and the decorator."""

from __future__ import annotations

from collections.abc import Callable
from typing import overload

from langchain_core.tools import BaseTool, ToolException, tool
from langgraph.prebuilt import ToolRuntime

from .context import ToolContext

Runtime = ToolRuntime[ToolContext]
"""The type of the injected ``runtime`` parameter: LangGraph fills it, the model never sees it."""


class ToolError(ToolException):
    """A failure the model caused or can fix; its message is written for the model."""


class ToolFailed(ToolError):
    """The tool ran and what it ran failed (a command's non-zero exit, a timeout, a signal):
    its message is the whole result, whose first line already says how it ended, so it is
    not prefixed with "Error:". Raised, not returned, so that the tool message's status is
    "error" and every reader of the thread (the chat, `threads show`, the audit, a plan)
    sees the failure the same way."""


def _error_content(error: ToolException) -> str:
    return str(error) if isinstance(error, ToolFailed) else f"Error: {error}"


@overload
def builtin_tool(func: Callable[..., str]) -> BaseTool: ...


@overload
def builtin_tool(
    *, precheck: Callable[..., str | None]
) -> Callable[[Callable[..., str]], BaseTool]: ...


def builtin_tool(
    func: Callable[..., str] | None = None, *, precheck: Callable[..., str | None] | None = None
) -> BaseTool | Callable[[Callable[..., str]], BaseTool]:
    """Turn a function into a LangChain tool the way all built-in tools are made.

    The Google-style docstring becomes the description and the per-argument help. A
    ``ToolError`` becomes a tool message with status "error" whose text starts with "Error:"
    (providers drop the status, so the text has to say it), whatever the ToolNode's
    ``handle_tool_errors`` setting is; a ``ToolFailed`` too, its text as it is. Any other
    exception propagates to the ToolNode.
    ``precheck``: the tool's precondition, kept in its metadata (tools/preconditions.py).
    """
    if func is None:
        return lambda inner: _build(inner, precheck)
    return _build(func, precheck)


def _build(func: Callable[..., str], precheck: Callable[..., str | None] | None) -> BaseTool:
    built = tool(func, parse_docstring=True, error_on_invalid_docstring=True)
    built.description = " ".join(built.description.split())
    built.handle_tool_error = _error_content
    if precheck is not None:
        built.metadata = {**(built.metadata or {}), "precheck": precheck}
    return built


def context_of(runtime: Runtime) -> ToolContext:
    """The run's ToolContext, or a clear error for an application that forgot to pass one."""
    context = runtime.context
    if not isinstance(context, ToolContext):
        raise RuntimeError(
            "built-in tools need a ToolContext (or subclass) as the graph's context: compile with "
            f"context_schema=ToolContext and invoke with context=...; got {type(context).__name__}"
        )
    return context
