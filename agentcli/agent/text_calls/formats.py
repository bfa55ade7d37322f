"""The forms a model writes a tool call in as text, each read from an answer.

- `<tool_call>{"name": ..., "arguments": ...}</tool_call>` (Hermes, Qwen; the closing tag
  may be missing at the end of the answer)
- `[TOOL_CALLS][{"name": ..., "arguments": ...}, ...]` and `[TOOL_CALLS]name[ARGS]{...}`
  (Mistral)
- `<|python_tag|>{"name": ..., "parameters": ...}` (Llama 3; several joined by `;`)
- `<function=name>{...}</function>` (Llama 3.1's other form)
- a fenced code block holding only `tool_call(a=1, ...)`, right under a line that is only
  the tool's name (ChatGLM); arguments are Python literals
- a bare JSON object (or list of them) naming a tool, when it is the whole answer (fenced
  or not)

Each reader hands back where a call's markup starts and ends and the calls it holds; only
calls of offered tools are read. A payload over MAX_PAYLOAD characters is not parsed, and
every parse of JSON goes through `_raw` (tests count what it reads). How the readers are
combined, and what recovery promises, is in agentcli/agent/text_calls/recovery.py.
"""

from __future__ import annotations

import ast
import json
import re
import uuid
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from langchain_core.messages.tool import InvalidToolCall, ToolCall, invalid_tool_call, tool_call

from agentcli.agent.text_calls.code_regions import FENCE, CodeTest, code_regions

MAX_PAYLOAD = 1_000_000  # characters of one call's markup; larger is left as text

HERMES, MISTRAL = "<tool_call>", "[TOOL_CALLS]"
PYTHON_TAG, FUNCTION = "<|python_tag|>", "<function="
MARKERS = (HERMES, MISTRAL, PYTHON_TAG, FUNCTION)
_MARKER = re.compile("|".join(re.escape(m) for m in MARKERS))
_FUNCTION_NAME = re.compile(r"([A-Za-z0-9_.\-]{1,128})>")
_MISTRAL_NAME = re.compile(r"\s*([A-Za-z0-9_.\-]{1,128})\[ARGS\]")
_LLAMA_END = ("<|eom_id|>", "<|eot_id|>")
_BLANK = re.compile(r"\s*")


def fresh_id() -> str:
    return f"call_{uuid.uuid4().hex[:24]}"


_DECODER = json.JSONDecoder()


def _raw(text: str, at: int) -> tuple[Any, int]:
    """The JSON value starting at `at` and where it ends (ValueError if none). Every parse
    of JSON goes through here: the linearity test counts what it reads."""
    return _DECODER.raw_decode(text, at)


def _decode(payload: str) -> tuple[Any, int] | None:
    """The JSON value at the start of `payload` (after blanks) and where it ends, or None."""
    if len(payload) > MAX_PAYLOAD:
        return None
    try:
        return _raw(payload, _BLANK.match(payload).end())  # type: ignore[union-attr]
    except (ValueError, RecursionError):
        return None


def _whole(payload: str) -> Any:
    """`payload` as one JSON value (blanks around it allowed), or None."""
    decoded = _decode(payload)
    if decoded is None or payload[decoded[1] :].strip():
        return None
    return decoded[0]


Call = ToolCall | InvalidToolCall


def _call(value: Any, offered: Collection[str]) -> Call | None:
    """A call of an offered tool from {"name", "arguments" | "parameters"} (or OpenAI's
    {"type": "function", "function": {...}}), else None."""
    if isinstance(value, dict) and isinstance(value.get("function"), dict):
        value = value["function"]
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        return None
    name = value["name"]
    if name not in offered:
        return None
    args = value.get("arguments", value.get("parameters", {}))
    return _with_args(name, args)


def _with_args(name: str, args: Any) -> Call:
    if isinstance(args, str):  # arguments given as a JSON string, as the API sends them
        raw = args
        args = _whole(args) if args.strip() else {}
        if not isinstance(args, dict):
            error = "the arguments are not a JSON object"
            return invalid_tool_call(name=name, args=raw, id=fresh_id(), error=error)
    if not isinstance(args, dict):
        raw = json.dumps(args)[:2000]
        error = "the arguments are not a JSON object"
        return invalid_tool_call(name=name, args=raw, id=fresh_id(), error=error)
    return tool_call(name=name, args=args, id=fresh_id())


def _calls(value: Any, offered: Collection[str]) -> list[Call] | None:
    """Every call in an object or a list of objects; None unless all of them are calls."""
    items = value if isinstance(value, list) else [value]
    calls = [_call(item, offered) for item in items]
    if not items or any(call is None for call in calls):
        return None
    return [call for call in calls if call is not None]


@dataclass
class Found:
    """Calls one reader found: where their markup starts and ends, and its format's name."""

    start: int
    end: int
    calls: list[Call]
    format: str


def marked(text: str, offered: Collection[str]) -> list[Found]:
    """Calls after the four markers; each payload ends where the next marker starts."""
    regions = code_regions(text)
    in_code = CodeTest(text, regions)
    marks = [(m.start(), m.group()) for m in _MARKER.finditer(text) if not in_code(m.start())]
    found: list[Found] = []
    for i, (start, marker) in enumerate(marks):
        limit = marks[i + 1][0] if i + 1 < len(marks) else len(text)
        body = start + len(marker)
        hit = _one(text, marker, start, body, limit, offered)
        if hit is not None:
            found.append(hit)
    return found


def _one(
    text: str, marker: str, start: int, body: int, limit: int, offered: Collection[str]
) -> Found | None:
    if limit - body > MAX_PAYLOAD:
        return None
    if marker == HERMES:
        close = text.find("</tool_call>", body, limit)
        if close == -1:  # unclosed (Qwen at the end of an answer): the JSON is the call
            decoded = _decode(text[body:limit])
            value, stop = decoded if decoded is not None else (None, 0)
            stop += body
        else:
            value, stop = _whole(text[body:close]), close + len("</tool_call>")
        calls = _calls(value, offered) if value is not None else None
        return None if calls is None else Found(start, stop, calls, "hermes")
    if marker == FUNCTION:
        named = _FUNCTION_NAME.match(text, body, limit)
        if named is None or named.group(1) not in offered:
            return None
        close = text.find("</function>", named.end(), limit)
        end = limit if close == -1 else close
        args = _whole(text[named.end() : end])
        if args is None:
            return None
        stop = end if close == -1 else close + len("</function>")
        return Found(start, stop, [_with_args(named.group(1), args)], "function")
    if marker == MISTRAL:
        return _mistral(text, start, body, limit, offered)
    return _python_tag(text, start, body, limit, offered)


def _mistral(
    text: str, start: int, body: int, limit: int, offered: Collection[str]
) -> Found | None:
    named = _MISTRAL_NAME.match(text, body, limit)
    if named is not None:  # [TOOL_CALLS]name[ARGS]{...}
        if named.group(1) not in offered:
            return None
        decoded = _decode(text[named.end() : limit])
        if decoded is None:
            return None
        args, length = decoded
        return Found(start, named.end() + length, [_with_args(named.group(1), args)], "mistral")
    decoded = _decode(text[body:limit])
    if decoded is None:
        return None
    value, length = decoded
    calls = _calls(value, offered)
    return None if calls is None else Found(start, body + length, calls, "mistral")


def _python_tag(
    text: str, start: int, body: int, limit: int, offered: Collection[str]
) -> Found | None:
    """`<|python_tag|>{...}; {...}`, maybe ended by <|eom_id|> or <|eot_id|>."""
    segment = text[body:limit]
    if len(segment) > MAX_PAYLOAD:
        return None
    calls: list[Call] = []
    at = end = 0
    while True:
        at = _BLANK.match(segment, at).end()  # type: ignore[union-attr]
        try:
            value, after = _raw(segment, at)
        except (ValueError, RecursionError):
            break
        call = _call(value, offered)
        if call is None:
            return None
        calls.append(call)
        end = after
        at = _BLANK.match(segment, after).end()  # type: ignore[union-attr]
        if not segment.startswith(";", at):
            break
        at += 1
    if not calls:
        return None
    at = _BLANK.match(segment, end).end()  # type: ignore[union-attr]
    for stop in _LLAMA_END:
        if segment.startswith(stop, at):
            end = at + len(stop)
    return Found(start, body + end, calls, "llama3")


def chatglm(text: str, offered: Collection[str]) -> list[Found]:
    """Fenced blocks holding only `tool_call(k=v, ...)`, right under a line that is exactly
    an offered tool's name (the fence at the start of its line)."""
    found: list[Found] = []
    for start, end in code_regions(text):
        block = text[start:end]
        if not block.startswith(FENCE):
            continue
        first = block.find("\n")
        if first == -1 or not block.rstrip().endswith(FENCE) or end - start > MAX_PAYLOAD:
            continue
        source = block[first + 1 :].rstrip()[: -len(FENCE)].strip()
        parsed = _python_call(source)
        if parsed is None:
            continue
        func, args = parsed
        line_start = text.rfind("\n", 0, max(start - 1, 0)) + 1
        name = text[line_start:start]
        if func != "tool_call" or not name.endswith("\n") or name[:-1] not in offered:
            continue
        name = name[:-1]
        found.append(Found(line_start, end, [_with_args(name, args)], "chatglm"))
    return found


def _python_call(source: str) -> tuple[str, dict[str, Any]] | None:
    """`name(k=literal, ...)` as (name, {k: value}), or None for anything else."""
    if not source or not source[0].isidentifier() or "(" not in source:
        return None
    try:
        tree = ast.parse(source, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    node = tree.body
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name) or node.args:
        return None
    args: dict[str, Any] = {}
    for keyword in node.keywords:
        if keyword.arg is None:
            return None
        try:
            args[keyword.arg] = ast.literal_eval(keyword.value)
        except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
            return None
    try:
        json.dumps(args)
    except (TypeError, ValueError):  # bytes, sets, complex: not JSON arguments
        return None
    return node.func.id, args


def bare(text: str, offered: Collection[str]) -> list[Found]:
    """The whole answer as a JSON call (or list of calls), fenced or not."""
    body = text.strip()
    if body.startswith(FENCE) and body.endswith(FENCE) and body.count(FENCE) == 2:
        first = body.find("\n")
        body = body[first + 1 : -len(FENCE)] if first != -1 else ""
    if not body.strip().startswith(("{", "[")):
        return []
    value = _whole(body)
    calls = _calls(value, offered) if value is not None else None
    return [] if calls is None else [Found(0, len(text), calls, "json")]
