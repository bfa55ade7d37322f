"""What a client answers a review: read, checked and, when refused, asked again.

Any client of a LangGraph server may resume the review node, so a resume value is untrusted:
its shape (`decisions_in`), each edit's arguments (`checked`) and whether an edit changes
anything (`unchanged`) are checked before the approve node acts on it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from agentcli_tools.context import ToolContext
from agentcli_tools.plurals import counted
from langchain_core.messages import ToolCall
from langchain_core.tools import BaseTool
from langgraph.types import interrupt
from pydantic import BaseModel

from agentcli.agent.input_bounds import MAX_EDIT_BYTES, MAX_LABEL_CHARS, clipped, json_size
from agentcli.agent.review.argument_check import validate_args
from agentcli.agent.review.precheck import precondition
from agentcli.agent.toolset.sandboxing import UNCONFINED
from agentcli.decisions import DECISIONS, UNCHANGED
from agentcli.policy.thread_rules import MAX_MATCH


def decisions_in(
    answer: Any, expected: int, allowed: Sequence[str] = DECISIONS, confined: Sequence[bool] = ()
) -> list[Mapping[str, Any]]:
    """Check the shape of a resume value from any client before acting on it (ValueError)."""
    if isinstance(answer, str):
        answer = json.loads(answer)
    decisions = answer.get("decisions") if isinstance(answer, Mapping) else None
    if not isinstance(decisions, list) or len(decisions) != expected:
        raise ValueError(
            f'the answer must be {{"decisions": [...]}} with {counted(expected, "decision")},'
            f" one per call in order; got {_clip(answer)}"
        )
    for index, decision in enumerate(decisions, 1):
        kind = decision.get("type") if isinstance(decision, Mapping) else None
        if not isinstance(kind, str) or kind not in allowed:
            raise ValueError(
                f"decision {index}: type must be one of {', '.join(allowed)}; got {_clip(decision)}"
            )
        assert isinstance(decision, Mapping)
        for key in ("message", "who", "by"):
            if decision.get(key) is not None and not isinstance(decision[key], str):
                raise ValueError(f"decision {index}: {key} must be a string")
        decision = decisions[index - 1] = _bounded_texts(decision)
        if decision.get("sandbox") is not None and (
            decision["sandbox"] != UNCONFINED
            or kind != "approve"
            or not (len(confined) >= index and confined[index - 1])
        ):
            raise ValueError(
                f'decision {index}: "sandbox": "off" goes only with an approve of a call that'
                " would run confined (a shell command, the sandbox on)"
            )
        if decision.get("match") is not None and not _scoped_ok(decision, kind):
            raise ValueError(
                f"decision {index}: a match goes only with an approve that has"
                f' "always": true, as a string of 1 to {MAX_MATCH} characters'
            )
        action = decision.get("edited_action")
        if kind == "edit" and not (
            isinstance(action, Mapping) and isinstance(action.get("args"), dict)
        ):
            raise ValueError(f"decision {index}: an edit needs edited_action.args as an object")
        size = json_size(action["args"]) if isinstance(action, Mapping) else 0
        if kind == "edit" and (size is None or size > MAX_EDIT_BYTES):
            raise ValueError(
                f"decision {index}: the edited arguments are over the {MAX_EDIT_BYTES:,} bytes"
                f" of JSON an edit may carry ({'nested too deep' if size is None else f'{size:,}'})"
            )
    return decisions


def _bounded_texts(decision: Mapping[str, Any]) -> Mapping[str, Any]:
    """A decision whose message (feedback, a reject's reason) is clipped as a person's
    message is, and whose `who`/`by` are cut to a label's length (input_bounds.py)."""
    changes: dict[str, str] = {}
    if isinstance(message := decision.get("message"), str):
        if (short := clipped(message)) is not message:
            changes["message"] = short
    for key in ("who", "by"):
        if isinstance(label := decision.get(key), str) and len(label) > MAX_LABEL_CHARS:
            changes[key] = label[:MAX_LABEL_CHARS]
    return {**decision, **changes} if changes else decision


def _scoped_ok(decision: Mapping[str, Any], kind: str) -> bool:
    match = decision.get("match")
    return (
        kind == "approve"
        and decision.get("always") is True
        and isinstance(match, str)
        and 0 < len(match) <= MAX_MATCH
    )


def unchanged(tool: BaseTool | None, original: Any, edited: Any) -> bool:
    """Whether an edit leaves the call as it was: the same JSON, or the same values once read
    by the tool's schema with its defaults applied (adding `"times": 1` where 1 is the
    default, or a key the schema drops, changes nothing that runs). Only an approval
    approves; when either side cannot be read, they are compared as JSON."""
    if _json(original) == _json(edited):
        return True
    before, after = _values(tool, original), _values(tool, edited)
    return before is not None and before == after


def _values(tool: BaseTool | None, args: Any) -> str | None:
    """`args` as the tool will take them, as canonical JSON; None if they cannot be read."""
    schema = tool.tool_call_schema if tool is not None else None
    if not isinstance(args, dict):
        return None
    try:
        if isinstance(schema, type) and issubclass(schema, BaseModel):
            return _json(schema.model_validate(args).model_dump(mode="json"))
        if isinstance(schema, dict) and isinstance(schema.get("properties"), dict):
            properties = schema["properties"].items()
            defaults = {
                k: p["default"] for k, p in properties if isinstance(p, dict) and "default" in p
            }
            return _json(defaults | args)
    except Exception:  # unreadable (or not dumpable) values: compared as JSON instead
        return None
    return None


def _json(value: Any) -> str:
    """One text for one JSON value (keys sorted; true is not 1, 1 is not 1.0)."""
    return json.dumps(value, sort_keys=True, default=repr)


def checked(
    answer: Any,
    calls: Sequence[ToolCall],
    by_name: Mapping[str, BaseTool],
    allowed: Sequence[str] = DECISIONS,
    *,
    context: ToolContext | None = None,
    confined: Collection[str | None] = (),
) -> list[Mapping[str, Any]]:
    """The decisions in a resume value, each edit's arguments valid for its tool (and, with
    the run's `context`, meeting the tool's preconditions); only the calls in `confined`
    (their ids) may be approved unconfined."""
    decisions = decisions_in(answer, len(calls), allowed, [c["id"] in confined for c in calls])
    for index, (call, decision) in enumerate(zip(calls, decisions, strict=True), 1):
        if decision["type"] == "edit":
            args = decision["edited_action"]["args"]  # coerced in place to the schema's types
            tool = by_name.get(call["name"])
            if problem := validate_args(tool, args, list(by_name), edited=True):
                raise ValueError(f"decision {index} ({call['name']}): edited {problem}")
            if problem := precondition(tool, args, context):
                raise ValueError(f"decision {index} ({call['name']}): {problem}")
            if unchanged(by_name.get(call["name"]), call["args"], args):  # only `approve` does
                raise ValueError(f"decision {index} ({call['name']}): {UNCHANGED}")
    return decisions


def ask(
    request: dict[str, Any], check: Callable[[Any], list[Mapping[str, Any]]]
) -> list[Mapping[str, Any]]:
    """Ask a person, and again while the answer is refused: a bad answer is consumed, and
    the same question comes back with an `error` saying why, so no client's malformed value
    can stay attached to the review and make every later answer fail.

    LangGraph matches the interrupts of one node to resume values by their order and
    replays the earlier values when the node runs again, so each refused answer is kept
    and the loop reaches the same question on every replay.
    """
    answer = interrupt(request)
    while True:
        try:
            return check(answer)
        except ValueError as exc:  # json.JSONDecodeError included
            answer = interrupt({**request, "error": f"answer refused: {exc}"})


def _clip(value: Any, limit: int = 120) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
