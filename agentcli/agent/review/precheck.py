"""A tool's preconditions, asked before a call is shown to anyone (tools/preconditions.py).

A call whose precheck says it will be refused goes back to the model as an invalid call
does, without asking the person; an edit a person makes is refused the same way. The tool
checks again when it runs: this is a courtesy to the person, not the guard.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentcli_tools.context import ToolContext
from agentcli_tools.preconditions import precheck_of
from langchain_core.tools import BaseTool


def precondition(tool: BaseTool | None, args: Any, context: ToolContext | None) -> str | None:
    """Why the call will be refused when it runs, or None (none known: the person decides).

    A precheck that fails is no verdict: the call is asked about as usual, and the tool
    still checks when it runs."""
    check = precheck_of(tool)
    if check is None or context is None or not isinstance(args, Mapping):
        return None
    try:
        problem = check(args, context)
    except Exception:  # a broken precheck, perhaps a custom tool's: not a refusal
        return None
    return problem if isinstance(problem, str) and problem else None
