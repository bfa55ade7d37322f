"""Arguments checked against a tool's JSON schema (MCP tools, and custom tools that give one).

The schema comes from an MCP server, which may be hostile: checking is bounded. A schema over
MAX_SCHEMA_CHARS, a pattern over MAX_PATTERN_CHARS, a `$ref` that is not inside the schema,
a check that takes longer than TIME_BUDGET_S (regular expressions run with that timeout,
every keyword looks at the clock) or any error from the validator is a problem: the call
fails closed, as invalid. See args_coercion.py for how an edit's strings become numbers.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from functools import lru_cache
from typing import Any

MAX_SCHEMA_CHARS = 200_000
MAX_PATTERN_CHARS = 1_000
TIME_BUDGET_S = 0.5  # regex overshoots its timeout under load: a few times this, at most
MAX_PROBLEMS = 5
PROBLEM_CHARS = 200

_deadline: ContextVar[float] = ContextVar("agentcli_jsonargs_deadline", default=0.0)


class _Exhausted(Exception):
    """The check ran out of time."""


def schema_problem(schema: dict[str, Any], args: Any) -> str | None:
    """Why `args` does not fit `schema`, or None when it does; always within the budget."""
    try:
        text = json.dumps(schema, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as exc:
        return f"the tool's schema cannot be checked ({type(exc).__name__})"
    if len(text) > MAX_SCHEMA_CHARS:
        return f"the tool's schema is too large to check ({len(text)} characters)"
    try:  # before the clock starts: the first check imports jsonschema, slow on a busy
        validator = _validator(text)  # machine; building is bounded by the schema's size
    except Exception as exc:  # a hostile schema: SchemaError, RecursionError...
        return _unreadable(exc)
    token = _deadline.set(time.monotonic() + TIME_BUDGET_S)
    try:
        errors = []
        for error in validator.iter_errors(args):
            errors.append(error)
            if len(errors) >= MAX_PROBLEMS:
                break
    except _Exhausted:
        return f"the arguments could not be checked within {TIME_BUDGET_S:g} s"
    except Exception as exc:  # the validator on a hostile schema: RecursionError...
        return _unreadable(exc)
    finally:
        _deadline.reset(token)
    if not errors:
        return None
    problems = [
        f"'{'.'.join(map(str, e.absolute_path)) or '(arguments)'}': {_short(e.message)}"
        for e in errors
    ]
    return "invalid arguments: " + "; ".join(problems)


def _unreadable(exc: Exception) -> str:
    return f"the tool's schema cannot be checked ({_short(type(exc).__name__ + ': ' + str(exc))})"


@lru_cache(maxsize=64)
def _validator(text: str) -> Any:
    """A validator for the schema in `text` (JSON), its regular expressions bounded."""
    import jsonschema
    from jsonschema_specifications import REGISTRY

    schema = json.loads(text)
    _check_patterns(schema)
    base = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    base.check_schema(schema)
    if _has_key(schema, "unevaluatedProperties") and _has_key(schema, "patternProperties"):
        raise ValueError("unevaluatedProperties with patternProperties is not supported")
    keywords = {name: _timed(check) for name, check in base.VALIDATORS.items()}
    keywords.update(
        pattern=_timed(_pattern),
        patternProperties=_timed(_pattern_properties),
        additionalProperties=_timed(_additional_properties),
    )
    # an integer is an int, not 2.0: the server gets the value as sent, and Python servers
    # read 2.0 as a float (JSON Schema itself would let 2.0 through as an integer)
    strict = base.TYPE_CHECKER.redefine(
        "integer", lambda _, value: isinstance(value, int) and not isinstance(value, bool)
    )
    bounded = jsonschema.validators.extend(base, keywords, type_checker=strict)
    # only the schema itself and the JSON Schema specifications: never fetch a remote $ref
    return bounded(schema, registry=REGISTRY)


def _check_patterns(schema: Any, depth: int = 0) -> None:
    """Refuse a pattern too long to compile cheaply, wherever it is in the schema."""
    if depth > 200:
        raise RecursionError("the schema is nested too deeply")
    if isinstance(schema, dict):
        patterns = [schema.get("pattern"), *(schema.get("patternProperties") or {})]
        for pattern in patterns:
            if isinstance(pattern, str) and len(pattern) > MAX_PATTERN_CHARS:
                raise ValueError(f"a pattern is over {MAX_PATTERN_CHARS} characters")
        for value in schema.values():
            _check_patterns(value, depth + 1)
    elif isinstance(schema, list):
        for value in schema:
            _check_patterns(value, depth + 1)


def _has_key(schema: Any, key: str) -> bool:
    if isinstance(schema, dict):
        return key in schema or any(_has_key(value, key) for value in schema.values())
    if isinstance(schema, list):
        return any(_has_key(value, key) for value in schema)
    return False


Keyword = Callable[[Any, Any, Any, dict[str, Any]], Iterator[Any]]


def _timed(check: Keyword) -> Keyword:
    def timed(validator: Any, value: Any, instance: Any, schema: dict[str, Any]) -> Iterator[Any]:
        if time.monotonic() > _deadline.get():
            raise _Exhausted
        return check(validator, value, instance, schema) or iter(())

    return timed


def _search(pattern: str, text: str) -> bool:
    """re.search's answer for JSON Schema patterns, given up on at the deadline."""
    import regex

    remaining = _deadline.get() - time.monotonic()
    if remaining <= 0:
        raise _Exhausted
    try:
        return regex.search(pattern, text, timeout=remaining) is not None
    except TimeoutError:
        raise _Exhausted from None


def _pattern(validator: Any, pattern: Any, instance: Any, schema: dict[str, Any]) -> Iterator[Any]:
    from jsonschema import ValidationError

    if validator.is_type(instance, "string") and not _search(pattern, instance):
        yield ValidationError(f"{_short(repr(instance))} does not match {_short(repr(pattern))}")


def _pattern_properties(
    validator: Any, patterns: Any, instance: Any, schema: dict[str, Any]
) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if _search(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(
    validator: Any, allowed: Any, instance: Any, schema: dict[str, Any]
) -> Iterator[Any]:
    from jsonschema import ValidationError

    if not validator.is_type(instance, "object"):
        return
    properties = schema.get("properties", {})
    patterns = list(schema.get("patternProperties", {}))
    extras = [
        key
        for key in instance
        if key not in properties and not any(_search(p, key) for p in patterns)
    ]
    if validator.is_type(allowed, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], allowed, path=extra)
    elif not allowed and extras:
        names = ", ".join(_short(repr(extra)) for extra in sorted(extras)[:MAX_PROBLEMS])
        yield ValidationError(f"additional properties are not allowed ({names} unexpected)")


def _where(path: Any) -> str:
    return _short(".".join(map(str, path))) or "(arguments)"


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= PROBLEM_CHARS else text[: PROBLEM_CHARS - 1] + "…"
