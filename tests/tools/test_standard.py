"""langchain-tests' standard unit tests for tools, run against every built-in tool."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from agentcli_tools.context import ToolContext
from agentcli_tools.registry import BUILTIN_TOOLS
from langchain_core.tools import BaseTool
from langgraph.prebuilt import ToolRuntime

unit_tests = pytest.importorskip("langchain_tests.unit_tests")

EXAMPLES: dict[str, dict[str, Any]] = {
    "read_file": {"path": "README.md", "offset": 1, "limit": 10},
    "write_file": {"path": "notes.txt", "content": "hello\n"},
    "edit_file": {"path": "notes.txt", "old_text": "hello", "new_text": "bye"},
    "list_dir": {"path": "."},
    "search_files": {"pattern": "TODO", "path": ".", "glob": "*.py"},
    "shell": {"command": "ls", "timeout": 10},
    "fetch_url": {"url": "https://example.com/"},
    "calculator": {"expression": "2 + 2"},
}


# The standard test validates the example against the tool's full input schema, which
# includes the injected `runtime` (the model-facing schema does not), so it is given here too.
RUNTIME: ToolRuntime[ToolContext] = ToolRuntime(
    state={},
    context=ToolContext(workspace=Path(".")),
    config={},
    stream_writer=lambda _chunk: None,
    tool_call_id="call-1",
    store=None,
)


def _standard_tests(tool: BaseTool) -> type:
    class Standard(unit_tests.ToolsUnitTests):  # type: ignore[name-defined,misc]
        @property
        def tool_constructor(self) -> BaseTool:
            return tool

        @property
        def tool_invoke_params_example(self) -> dict[str, Any]:
            return {**EXAMPLES[tool.name], "runtime": RUNTIME}

    return Standard


for _name, _tool in BUILTIN_TOOLS.items():
    globals()[f"TestStandard_{_name}"] = _standard_tests(_tool)


def test_every_tool_has_an_example() -> None:
    assert EXAMPLES.keys() == BUILTIN_TOOLS.keys()
