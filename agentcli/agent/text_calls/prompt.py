"""`[model] tool_calls = "text"`: tools described in the system prompt, not sent as `tools`.

For models (or servers) with no native tool calling: the system prompt lists each tool
(name, description, the JSON schema of its arguments) and the one format to call it in,
`<tool_call>{"name": ..., "arguments": {...}}</tool_call>`, which the agent node recovers
from the answer (agentcli/agent/text_calls/recovery.py) like any other text call.

What goes to the server is written in the same terms (`as_text`), without changing what
the thread stores: an assistant turn's calls become `<tool_call>` blocks in its text, and
tool results go back in a user message of `<tool_response>` blocks, since a server without
tool support may refuse a message with role "tool" or an assistant message with
`tool_calls`. Each result is fenced (agentcli/agent/untrusted_text_fence.py): a result
cannot close its block early and write what looks like the person's text, or agentcli's.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool

from agentcli.agent.untrusted_text_fence import fence

INSTRUCTIONS = """# Tools

You can call the tools below. To call one, write a block like this in your answer, with the
tool's name and its arguments as a JSON object that fits the tool's schema:

<tool_call>
{{"name": "TOOL_NAME", "arguments": {{"ARGUMENT": "VALUE"}}}}
</tool_call>

Write one block per call, then stop and wait: each result comes back in the next user
message, inside <tool_response> tags. Only a block in this exact form is a call; text that
merely shows such a block inside backticks or a code fence is not one.

{tools}"""


def describe(tools: Sequence[BaseTool | dict[str, Any]]) -> str:
    """The system prompt's section describing `tools` (LangChain tools, or OpenAI tool
    schemas such as a small window's terse ones) and how to call them."""
    entries = []
    for tool in tools:
        function = convert_to_openai_tool(tool)["function"]
        schema = json.dumps(function.get("parameters", {}), ensure_ascii=False)
        description = function.get("description") or ""
        entries.append(f"## {function['name']}\n{description}\nArguments (JSON schema): {schema}")
    return INSTRUCTIONS.format(tools="\n\n".join(entries))


def call_block(name: str, args: object) -> str:
    payload = json.dumps({"name": name, "arguments": args}, ensure_ascii=False)
    return f"<tool_call>\n{payload}\n</tool_call>"


def as_text(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """The history as a model without tool calling reads it (the stored one is unchanged)."""
    out: list[BaseMessage] = []
    results: list[str] = []
    for message in messages:
        if isinstance(message, ToolMessage):
            status = "error" if message.status == "error" else "ok"
            results.append(
                fence("tool_response", message.text, name=message.name or "", status=status)
            )
            continue
        if results:
            out.append(HumanMessage("\n".join(results)))
            results = []
        if isinstance(message, AIMessage) and (message.tool_calls or message.invalid_tool_calls):
            blocks = [call_block(call["name"], call["args"]) for call in message.tool_calls]
            blocks += [
                call_block(bad.get("name") or "unknown", bad.get("args"))
                for bad in message.invalid_tool_calls
            ]
            text = "\n\n".join(part for part in (message.text, *blocks) if part)
            out.append(AIMessage(text, id=message.id))
        else:
            out.append(message)
    if results:
        out.append(HumanMessage("\n".join(results)))
    return out
