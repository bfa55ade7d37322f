"""The registry and the model-facing contract: names, arguments, no injected parameters."""

from __future__ import annotations

import asyncio
import inspect
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pytest
from agentcli_tools.catalogue import BUILTINS
from agentcli_tools.context import ToolContext
from agentcli_tools.registry import BUILTIN_TOOLS, builtin_tools
from langchain_core.messages import AIMessage
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from pydantic import BaseModel

if TYPE_CHECKING:
    from tests.helpers.tooling import ToolEnv


CONTRACT = {
    "read_file": (["path"], ["offset", "limit"]),
    "write_file": (["path", "content"], []),
    "edit_file": (["path", "old_text", "new_text"], []),
    "list_dir": ([], ["path"]),
    "search_files": (["pattern"], ["path", "glob"]),
    "shell": (["command"], ["timeout"]),
    "fetch_url": (["url"], []),
    "calculator": (["expression"], []),
}


def test_registry_order_and_names() -> None:
    assert list(BUILTIN_TOOLS) == list(CONTRACT)
    assert [tool.name for tool in builtin_tools()] == list(CONTRACT)


def test_catalogue_is_the_registry_without_langchain() -> None:
    """`agentcli tools` lists built-ins from the catalogue: it must say what the tools say."""
    assert list(BUILTINS) == list(BUILTIN_TOOLS)
    for name, tool in BUILTIN_TOOLS.items():
        func = getattr(tool, "func", None)
        assert func is not None and BUILTINS[name] == inspect.getdoc(func).splitlines()[0]


def test_builtin_tools_selects_in_registry_order() -> None:
    chosen = builtin_tools(["shell", "read_file", "shell"])
    assert [tool.name for tool in chosen] == ["read_file", "shell"]
    assert builtin_tools([]) == []


def test_builtin_tools_refuses_unknown_names() -> None:
    with pytest.raises(ValueError, match=r"unknown tool.*nope.*built-in tools: read_file"):
        builtin_tools(["read_file", "nope"])


@pytest.mark.parametrize("name", list(CONTRACT))
def test_model_facing_schema_is_the_contract(name: str) -> None:
    tool = BUILTIN_TOOLS[name]
    required, optional = CONTRACT[name]
    call_schema = tool.tool_call_schema
    assert isinstance(call_schema, type) and issubclass(call_schema, BaseModel)
    for schema in (
        call_schema.model_json_schema(),
        convert_to_openai_tool(tool)["function"]["parameters"],
    ):
        assert "runtime" not in json.dumps(schema)
        assert sorted(schema["properties"]) == sorted(required + optional)
        assert sorted(schema.get("required", [])) == sorted(required)
        for arg in schema["properties"].values():
            assert arg.get("description"), f"{name}: every argument needs a description"
    assert "runtime" not in tool.args
    assert "Args:" not in tool.description and len(tool.description) > 20


@pytest.mark.parametrize("name", [name for name, (required, _) in CONTRACT.items() if required])
def test_missing_arguments_go_back_to_the_model(tool_env: ToolEnv, name: str) -> None:
    message = tool_env(BUILTIN_TOOLS[name])
    assert message.status == "error"
    assert CONTRACT[name][0][0] in message.content and "runtime" not in message.content


@dataclass
class AppContext(ToolContext):
    """What an application's own context looks like: a subclass with more fields."""

    user: str = "someone"


def test_subclass_context_and_async_graph(tool_env: ToolEnv) -> None:
    (tool_env.workspace / "a.txt").write_text("hello\n")
    context = AppContext(workspace=tool_env.workspace, max_output_chars=1000)
    tool_env.context = context
    assert tool_env(BUILTIN_TOOLS["read_file"], path="a.txt").content == "     1\thello"
    graph = StateGraph(MessagesState, context_schema=AppContext)
    graph.add_node("tools", ToolNode(builtin_tools(), handle_tool_errors=True))
    graph.add_edge(START, "tools")
    calls = [
        {"name": "list_dir", "args": {}, "id": "1", "type": "tool_call"},
        {"name": "calculator", "args": {"expression": "6 * 7"}, "id": "2", "type": "tool_call"},
        {"name": "read_file", "args": {"path": "../x"}, "id": "3", "type": "tool_call"},
    ]
    state: MessagesState = {"messages": [AIMessage(content="", tool_calls=calls)]}
    result = asyncio.run(graph.compile().ainvoke(state, context=context))
    replies = {m.tool_call_id: m for m in result["messages"][1:]}
    assert "a.txt" in replies["1"].content
    assert replies["2"].content == "42"
    assert replies["3"].status == "error" and "outside the workspace" in replies["3"].content


def test_missing_context_is_a_clear_error() -> None:
    graph = StateGraph(MessagesState)
    graph.add_node("tools", ToolNode(builtin_tools(["list_dir"]), handle_tool_errors=True))
    graph.add_edge(START, "tools")
    call = {"name": "list_dir", "args": {}, "id": "1", "type": "tool_call"}
    result = graph.compile().invoke({"messages": [AIMessage(content="", tool_calls=[call])]})
    assert "need a ToolContext" in result["messages"][-1].content
