"""A call's arguments against its tool's schema: why they cannot be passed, or None."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.tools import BaseTool
from pydantic import BaseModel, ValidationError

from agentcli.agent.toolset.servers_down import down_server


def validate_args(
    tool: BaseTool | None,
    args: Any,
    known: Sequence[str] = (),
    *,
    edited: bool = False,
    name: str = "",
) -> str | None:
    """Why these arguments cannot be passed to the tool, or None when they can.

    A tool with a JSON schema (MCP tools) is checked against it, within bounds (see
    args_schema.py). `edited` arguments (a person's, or a client's edit) are first read
    as the schema's types where unambiguous ("5" -> 5 for an integer): when they then fit,
    `args` is updated in place, so what runs and what the history shows is the converted
    value. The model's own calls are never converted: they fit as they are, or go back.
    With no tool, a call named `name` for a tool of an MCP server that is down is told so.
    """
    if tool is None:
        return down_server(name) or f"unknown tool. Available tools: {', '.join(known) or 'none'}"
    if not isinstance(args, dict):
        return "arguments must be a JSON object"
    schema = tool.tool_call_schema
    if isinstance(schema, dict):
        from agentcli.agent.review.args_schema import schema_problem

        if not edited:
            return schema_problem(schema, args)
        from agentcli.agent.review.args_coercion import coerce_edit

        coerced = coerce_edit(schema, args)
        problem = schema_problem(schema, coerced)
        if problem is None and coerced != args:
            args.clear()
            args.update(coerced)
        return problem
    if not isinstance(schema, type) or not issubclass(schema, BaseModel):
        return None  # no schema at all: nothing to check the arguments against
    problems = []
    try:
        schema.model_validate(args)
    except ValidationError as exc:
        problems = [
            f"'{'.'.join(str(p) for p in err['loc']) or '(arguments)'}': {err['msg']}"
            for err in exc.errors()
        ]
    # pydantic ignores unknown keys; a call carrying them (`url` on write_file) is refused, so
    # no argument reaches the policy or the person that the tool does not take
    unknown = sorted(set(args) - set(schema.model_fields))
    if unknown and schema.model_config.get("extra") != "allow":
        takes = ", ".join(schema.model_fields) or "no arguments"
        problems.append(f"unknown {', '.join(map(repr, unknown))} (the tool takes {takes})")
    return "invalid arguments: " + "; ".join(problems) if problems else None
