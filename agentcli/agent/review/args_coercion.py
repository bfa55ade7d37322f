"""An edit's values converted to the types a tool's JSON schema asks for, where unambiguous.

A person typing arguments, and Agent Chat UI (which sends every edited value as a string),
give "5" where the schema wants 5. For EDITED arguments only (the model's own calls must be
right or go back to it), a string becomes an integer, number, boolean, null, object or array
when the schema's types leave exactly one reading ("5" for `integer`, "true" for `boolean`,
JSON text for `object`/`array`); a string stays a string wherever the schema allows one.
This only proposes: the result is validated (agentcli.agent.review.args_schema) like any arguments.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

MAX_DEPTH = 32  # nesting of values and of `$ref`s followed
INTEGER = re.compile(r"-?(?:0|[1-9][0-9]*)")
JSON_TYPES = {
    "object": dict,
    "array": list,
    "string": str,
    "boolean": bool,
    "null": type(None),
}


def coerce_edit(schema: dict[str, Any], args: dict[str, Any]) -> dict[str, Any]:
    """`args` with its values converted where the schema is unambiguous; never raises."""
    try:
        coerced = _coerce(schema, args, schema, 0)
    except (RecursionError, ValueError, TypeError, KeyError, IndexError):
        return args
    return coerced if isinstance(coerced, dict) else args


def _coerce(schema: Any, value: Any, root: dict[str, Any], depth: int) -> Any:
    if depth > MAX_DEPTH or not isinstance(schema, dict):
        return value
    branches = _branches(schema, root, depth)
    if isinstance(value, str):
        value = _converted(value, branches)
    fitting = [b for b in branches if _json_type(value) in _types(b)]
    if len(fitting) != 1:
        return value  # no schema, or several, for this value's type: leave its inside alone
    branch = fitting[0]
    if isinstance(value, dict):
        properties = branch.get("properties")
        if not isinstance(properties, dict):
            return value
        return {k: _coerce(properties.get(k), v, root, depth + 1) for k, v in value.items()}
    if isinstance(value, list) and isinstance(branch.get("items"), dict):
        return [_coerce(branch["items"], item, root, depth + 1) for item in value]
    return value


def _branches(schema: dict[str, Any], root: dict[str, Any], depth: int) -> list[dict[str, Any]]:
    """The alternatives a value may match: the schema itself, or its anyOf/oneOf branches,
    with local `$ref`s followed."""
    schema = _resolved(schema, root, depth)
    alternatives = schema.get("anyOf") or schema.get("oneOf")
    if isinstance(alternatives, list) and "type" not in schema:
        found = []
        for branch in alternatives:
            if isinstance(branch, dict) and depth < MAX_DEPTH:
                found += _branches(branch, root, depth + 1)
        return found
    return [schema]


def _resolved(schema: dict[str, Any], root: dict[str, Any], depth: int) -> dict[str, Any]:
    for _ in range(MAX_DEPTH - depth):
        ref = schema.get("$ref")
        if not (isinstance(ref, str) and ref.startswith("#")):
            return schema
        target: Any = root
        for part in [p for p in ref[1:].split("/") if p]:
            part = part.replace("~1", "/").replace("~0", "~")
            target = target[int(part)] if isinstance(target, list) else target[part]
        if not isinstance(target, dict):
            return {}
        schema = target
    return schema


def _types(schema: dict[str, Any]) -> set[str]:
    declared = schema.get("type")
    names = declared if isinstance(declared, list) else [declared]
    types = {name for name in names if isinstance(name, str)}
    if "number" in types:
        types.add("integer")  # an integer is a number
    return types


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    return next((name for name, kind in JSON_TYPES.items() if isinstance(value, kind)), "")


def _converted(text: str, branches: list[dict[str, Any]]) -> Any:
    """`text` read as the one non-string type the branches allow, else `text` unchanged."""
    wanted: set[str] = set()
    for branch in branches:
        types = _types(branch)
        if not types or "string" in types:
            return text  # a string is (or may be) right here: nothing is unambiguous
        wanted |= types
    readings = [reading for kind in sorted(wanted) if (reading := _read(text, kind)) is not None]
    distinct = {json.dumps(r[0], sort_keys=True) for r in readings}
    return readings[0][0] if len(distinct) == 1 else text


def _read(text: str, kind: str) -> tuple[Any] | None:
    """(value,) if `text` spells a value of JSON type `kind` exactly, else None."""
    if kind == "integer":
        return (int(text),) if INTEGER.fullmatch(text) and len(text) <= 400 else None
    if kind == "boolean":
        return {"true": (True,), "false": (False,)}.get(text)
    if kind == "null":
        return (None,) if text == "null" else None
    if kind not in ("number", "object", "array"):
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if kind == "number":
        number = isinstance(value, int | float) and not isinstance(value, bool)
        return (value,) if number and math.isfinite(value) else None
    return (value,) if _json_type(value) == kind else None
