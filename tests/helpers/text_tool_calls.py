"""Scripted-server profiles for models that write tool calls as text (issue 16, item 4).

Each format function returns a plain text reply (tests/helpers/scripted_server.py) whose
content holds one call in that model family's markup, between `before` and `after` text:

    server.push(hermes("calculator", {"expression": "2+2"}, before="Let me add."), text("4"))

`NoToolsServer` is a ScriptedServer for a server without tool support: a request that
carries `tools`, `tool_choice`, an assistant message with `tool_calls` or a message with
role "tool" is answered 400, as such servers do.

For the parser's unit tests: MARKUP, one calculator call (CALL, ARGS) in each format, and
PIECES, the fragments the parser looks for, to build hostile text from.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from tests.helpers.scripted_server import Reply, ScriptedServer, error, text


def _json(name: str, args: dict[str, Any], key: str = "arguments") -> str:
    return json.dumps({"name": name, key: args})


def _wrap(markup: str, before: str, after: str) -> str:
    return "\n\n".join(part for part in (before, markup, after) if part)


def hermes(name: str, args: dict[str, Any], before: str = "", after: str = "") -> Reply:
    """Hermes / Qwen: `<tool_call>{...}</tool_call>`."""
    return text(_wrap(f"<tool_call>\n{_json(name, args)}\n</tool_call>", before, after))


def mistral(name: str, args: dict[str, Any], before: str = "", after: str = "") -> Reply:
    """Mistral: `[TOOL_CALLS][{...}]`."""
    return text(_wrap(f"[TOOL_CALLS][{_json(name, args)}]", before, after))


def llama3(name: str, args: dict[str, Any], before: str = "", after: str = "") -> Reply:
    """Llama 3: `<|python_tag|>{"name", "parameters"}<|eom_id|>`."""
    return text(_wrap(f"<|python_tag|>{_json(name, args, 'parameters')}<|eom_id|>", before, after))


def function_tag(name: str, args: dict[str, Any], before: str = "", after: str = "") -> Reply:
    """Llama 3.1's other form: `<function=name>{...}</function>`."""
    return text(_wrap(f"<function={name}>{json.dumps(args)}</function>", before, after))


def chatglm(name: str, args: dict[str, Any], before: str = "", after: str = "") -> Reply:
    """ChatGLM: the tool's name on a line, then `tool_call(k=v)` in a code block."""
    keywords = ", ".join(f"{key}={value!r}" for key, value in args.items())
    return text(_wrap(f"{name}\n```python\ntool_call({keywords})\n```", before, after))


def bare_json(name: str, args: dict[str, Any], before: str = "", after: str = "") -> Reply:
    """A bare JSON object naming the tool, as the whole answer (`before`/`after` unused)."""
    return text(_json(name, args))


FORMATS: dict[str, Callable[..., Reply]] = {
    "hermes": hermes,
    "mistral": mistral,
    "llama3": llama3,
    "function": function_tag,
    "chatglm": chatglm,
    "json": bare_json,
}


class NoToolsServer(ScriptedServer):
    """A scripted server that refuses anything about native tool calling with a 400."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.refused: list[str] = []

    def _record(self, body: dict, headers: dict[str, str]) -> None:
        super()._record(body, headers)
        with self._lock:
            self._last = body

    def _next(self, body: dict | None = None) -> tuple[Reply | None, str]:
        problem = refusal(body if body is not None else self._last)
        if problem is None:
            return super()._next(body)
        with self._lock:
            self.refused.append(problem)
        return error(400, problem), "chatcmpl-refused"


def refusal(body: dict) -> str | None:
    """Why a server without tool support refuses `body`, or None."""
    if "tools" in body or "tool_choice" in body:
        return "this server does not support tools"
    for message in body.get("messages", []):
        if message.get("role") == "tool":
            return "unknown role 'tool'"
        if message.get("tool_calls"):
            return "tool_calls are not supported"
    return None


OFFERED = {"calculator", "read_file"}
ARGS = {"expression": "6*7"}
CALL = json.dumps({"name": "calculator", "arguments": ARGS})

MARKUP = {
    "hermes": f"<tool_call>\n{CALL}\n</tool_call>",
    "hermes-unclosed": f"<tool_call>\n{CALL}",
    "mistral": f"[TOOL_CALLS][{CALL}]",
    "mistral-args": '[TOOL_CALLS]calculator[ARGS]{"expression": "6*7"}',
    "llama3": '<|python_tag|>{"name": "calculator", "parameters": {"expression": "6*7"}}<|eom_id|>',
    "function": '<function=calculator>{"expression": "6*7"}</function>',
    "chatglm": "calculator\n```python\ntool_call(expression='6*7')\n```",
    "openai-shaped": '<tool_call>{"type": "function", "function": {"name": "calculator",'
    ' "arguments": "{\\"expression\\": \\"6*7\\"}"}}</tool_call>',
}


# Text made of the pieces the parser looks for, in any order: markers, names, JSON, fences.
PIECES = [
    "<tool_call>",
    "</tool_call>",
    "[TOOL_CALLS]",
    "<|python_tag|>",
    "<function=calculator>",
    "</function>",
    "[ARGS]",
    "<|eom_id|>",
    "calculator\n",
    "```python\n",
    "```\n",
    "tool_call(expression='1')",
    "`",
    CALL,
    '{"name": "shell", "arguments": {}}',
    "{",
    "}",
    "[",
    "]",
    '"',
    ";",
    "\n",
    " ",
    "text",
]
