"""The tools node: LangGraph's ToolNode, one approved call per task, guarded by the journal.

A task LangGraph runs again because its result was never saved (the process died while
the tool ran, or just after) finds its call in the journal, and the person is asked
again (rerun.py), the call marked as possibly partly run, instead of it running twice in
silence.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.prebuilt import ToolNode
from langgraph.runtime import Runtime

from agentcli.rerun import ask_again, journal_key
from agentcli.state import RunContext


def make_tools_node(tools: Sequence[BaseTool]):  # noqa: ANN201 - a LangGraph node
    tool_node = ToolNode(list(tools), handle_tool_errors=True)
    by_name = {tool.name: tool for tool in tools}

    def tools_node(
        task: dict[str, Any], runtime: Runtime[RunContext], config: RunnableConfig
    ) -> Any:
        journal = runtime.context.journal
        call = task["tool_call"]
        thread_id = str(config["configurable"]["thread_id"])
        # journal key: the call in this task. LangGraph gives a task run again the same id
        # (its namespace); some servers give every turn's first call the same call id.
        key = journal_key(call["id"], config["configurable"].get("checkpoint_ns", ""))
        decided: dict[str, Any] = {}
        if journal is not None:
            if earlier := journal.call_state(thread_id, key):
                again, decided = ask_again(call, earlier, by_name)
                if again is None:
                    return decided
                task = {**task, "tool_call": again}
            journal.call_started(thread_id, key)
        result = _redacted(tool_node.invoke(task, config), runtime.context.redactor)
        if journal is not None:
            journal.call_finished(thread_id, key)
        return {**result, **decided} if decided and isinstance(result, dict) else result

    return tools_node


def _redacted(result: Any, redactor: Any) -> Any:
    """The tool messages with the session's secrets replaced (tools.redaction), before
    they reach the checkpoint and the model."""
    if not redactor or not isinstance(result, dict):
        return result
    for message in result.get("messages", []):
        if isinstance(message, ToolMessage):
            message.content = redactor.value(message.content)
            message.artifact = redactor.value(message.artifact)
    return result
