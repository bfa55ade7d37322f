"""What every built-in tool shares: the runtime type and the decorator, which makes the
tools' errors (errors.py) LangChain's tool errors."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, overload

from langchain_core.tools import BaseTool, ToolException, tool
from langgraph.prebuilt import ToolRuntime

from .context import ToolContext
from .errors import ToolError, ToolFailed

__all__ = ["Runtime", "ToolError", "ToolFailed", "builtin_tool", "context_of"]

Runtime = ToolRuntime[ToolContext]
"""The type of the injected ``runtime`` parameter: LangGraph fills it, the model never sees it."""


class Reported(ToolException, ToolError):
    """A ToolError on its way out of a LangChain tool, which turns a ToolException into the
    tool message (`handle_tool_error`); `error` is the ToolError raised. Still a ToolError,
    for whoever calls a tool's function directly."""

    def __init__(self, error: ToolError) -> None:
        super().__init__(str(error))
        self.error = error


def _error_content(error: ToolException) -> str:
    raised = error.error if isinstance(error, Reported) else error
    return str(raised) if isinstance(raised, ToolFailed) else f"Error: {raised}"


def _reporting(func: Callable[..., str]) -> Callable[..., str]:
    """`func`, its ToolErrors raised as Reported (its signature and docstring, which make
    the tool's schema, are `func`'s)."""

    @functools.wraps(func)
    def run(*args: Any, **kwargs: Any) -> str:
        try:
            return func(*args, **kwargs)
        except Reported:
            raise
        except ToolError as error:
            raise Reported(error) from error

    return run


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
    built = tool(_reporting(func), parse_docstring=True, error_on_invalid_docstring=True)
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
