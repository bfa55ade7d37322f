"""The review node: every tool call passes here before it can run.

Invalid calls go straight back to the model; the policy allows or denies what it can;
whatever is left waits for a person in one `interrupt()` whose payload and resume value
follow LangChain v1's human-in-the-loop schema. Nothing here has side effects before the
interrupt: on resume the node re-runs from the start and must reach the same question.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from typing import Any

from langchain_core.messages import AIMessage, ToolCall, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.graph import END
from langgraph.runtime import Runtime
from langgraph.types import Command, Send, interrupt
from pydantic import BaseModel, ValidationError

from agentcli.approval import (
    allowed_tools,
    key_of,
    review_sealed,
    seal_call,
    seal_review,
    seal_tool,
    step_of,
    thread_of,
)
from agentcli.pending import ALTERED, answered_ids, vet
from agentcli.state import AgentState, RunContext

Sealer = Callable[[ToolCall], str]

REJECTED = "rejected by the user"
DECISIONS = ["approve", "edit", "reject"]
# a call cut off by a crash may also be marked done: not run again, its result unknown
RERUN_DECISIONS = [*DECISIONS, "done"]


def validate_args(
    tool: BaseTool | None, args: Any, known: Sequence[str] = (), *, edited: bool = False
) -> str | None:
    """Why these arguments cannot be passed to the tool, or None when they can.

    A tool with a JSON schema (MCP tools) is checked against it, within bounds (see
    agentcli.jsonargs). `edited` arguments (a person's, or a client's edit) are first read
    as the schema's types where unambiguous ("5" -> 5 for an integer): when they then fit,
    `args` is updated in place, so what runs and what the history shows is the converted
    value. The model's own calls are never converted: they fit as they are, or go back.
    """
    if tool is None:
        return f"unknown tool. Available tools: {', '.join(known) or 'none'}"
    if not isinstance(args, dict):
        return "arguments must be a JSON object"
    schema = tool.tool_call_schema
    if isinstance(schema, dict):
        from agentcli.jsonargs import schema_problem

        if not edited:
            return schema_problem(schema, args)
        from agentcli.jsoncoerce import coerce_edit

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


def review_request(
    calls: Sequence[tuple[ToolCall, str]], allowed: Sequence[str] = DECISIONS
) -> dict[str, Any]:
    """The interrupt payload for the calls that need a person (v1 HITL schema, plus `id`)."""
    return {
        "action_requests": [
            {
                "id": call["id"],
                "name": call["name"],
                "args": call["args"],
                "description": f"Tool execution requires approval ({reason})",
            }
            for call, reason in calls
        ],
        "review_configs": [
            {"action_name": call["name"], "allowed_decisions": list(allowed)} for call, _ in calls
        ],
    }


@dataclass
class Turn:
    """What one review decides: tool messages, the calls to run, and an audit record each."""

    replies: list[ToolMessage] = field(default_factory=list)
    approved: list[ToolCall] = field(default_factory=list)
    audit: list[dict[str, Any]] = field(default_factory=list)

    def run(self, call: ToolCall, decision: str, who: str, by: str, args: Any = None) -> None:
        ran = call if args is None else {**call, "args": args}
        self.approved.append(ran)
        self.note(call, decision, who, by, ran_args=ran["args"])

    def refuse(self, call: ToolCall, decision: str, who: str, by: str, text: str) -> None:
        self.replies.append(_refused(call, text))
        self.note(call, decision, who, by, feedback=text if decision == "feedback" else None)

    def invalid(self, call_id: str | None, name: str, args: Any, problem: str) -> None:
        self.replies.append(_error(call_id, name, problem))
        self.note({"id": call_id, "name": name, "args": args}, "invalid", "agentcli", problem)

    def update(self, **extra: Any) -> dict[str, Any]:
        # no "messages" key without replies: even an empty write makes LangGraph's reducer
        # index the whole history again
        replies = {"messages": self.replies} if self.replies else {}
        return {**replies, "audit": self.audit, **extra}

    def next(self, seal: Sealer) -> Any:
        """One ToolNode task per call to run, each with its seal, or back to the model."""
        if not self.approved:
            return "agent"
        return [
            Send(
                "tools",
                {
                    "__type": "tool_call_with_context",
                    "tool_call": call,
                    "state": {},
                    "approval": seal(call),
                },
            )
            for call in self.approved
        ]

    def note(self, call: Any, decision: str, who: str, by: str, **extra: Any) -> None:
        self.audit.append(audit_record(call, decision, who, by, **extra))


def audit_record(call: Any, decision: str, who: str, by: str, **extra: Any) -> dict[str, Any]:
    """One entry of the thread's audit: which call, what was decided, by whom."""
    return {
        "call_id": call["id"],
        "tool": call["name"],
        "args": call["args"],
        "decision": decision,
        "who": who,
        "by": by,
        "ran_args": None,
        "feedback": None,
        "at": datetime.now(UTC).isoformat(timespec="seconds"),
        **extra,
    }


STOPPED = "not run: the run stopped after too many invalid tool calls"


def make_review_nodes(tools: Sequence[BaseTool]):  # noqa: ANN201 - two LangGraph nodes
    """`review` validates and applies the policy; `approve` asks a person for the rest.

    They are two nodes so that the policy's verdicts are saved before the interrupt: a
    resume (maybe by another process with other flags) answers exactly what was asked.
    Every call either sends to the tools node carries its seal (approval.py), for the step
    the tools task runs at (this one's next).
    """
    by_name = {tool.name: tool for tool in tools}

    def review(state: AgentState, runtime: Runtime[RunContext], config: RunnableConfig) -> Command:
        ctx = runtime.context
        key, thread = key_of(ctx), thread_of(config)
        allowed = allowed_tools(key, thread, state)
        message = _last_assistant(state["messages"])
        turn = Turn()
        asking: list[dict[str, Any]] = []
        for bad in message.invalid_tool_calls:
            detail = f"the arguments are not valid JSON ({bad.get('error') or 'parse error'})"
            turn.invalid(bad.get("id"), bad.get("name") or "unknown", bad.get("args"), detail)
        for call in message.tool_calls:
            problem = validate_args(by_name.get(call["name"]), call["args"], list(by_name))
            if problem:
                turn.invalid(call["id"], call["name"], call["args"], problem)
                continue
            verdict = ctx.policy.decide(
                call["name"], call["args"], allowed, workspace=ctx.workspace
            )
            if verdict.decision == "allow":
                turn.run(call, "allowed", verdict.who, verdict.by)
            elif verdict.decision == "deny":
                turn.refuse(call, "denied", verdict.who, verdict.by, verdict.refusal)
            else:
                asking.append({"call": call, "reason": verdict.reason})

        invalid = any(record["decision"] == "invalid" for record in turn.audit)
        invalid_turns = state.get("invalid_turns", 0) + 1 if invalid else 0
        if invalid_turns >= ctx.max_invalid_turns:  # every call still gets its tool message
            for call in [*turn.approved, *(item["call"] for item in asking)]:
                turn.refuse(call, "denied", "agentcli", "max_invalid_turns", STOPPED)
            turn.approved = []
            return Command(update=turn.update(invalid_turns=invalid_turns), goto=END)
        step = step_of(config) + 1  # of the approve or tools tasks this sends
        if asking:
            update = turn.update(invalid_turns=invalid_turns)
            update["review"] = seal_review(key, thread, step, turn.approved, asking)
            return Command(update=update, goto="approve")
        seal = partial(seal_call, key, thread, step)
        return Command(update=turn.update(invalid_turns=invalid_turns), goto=turn.next(seal))

    def approve(state: AgentState, runtime: Runtime[RunContext], config: RunnableConfig) -> Command:
        ctx = runtime.context
        key, thread = key_of(ctx), thread_of(config)
        message = _last_assistant(state["messages"])
        # the review's own verdicts (sealed by it for this step), each exactly a call of the
        # model's turn (pending.py): else every call left is refused, none asked
        review = state.get("review")
        if not review_sealed(key, thread, step_of(config), review):
            review = None
        pending = vet(review, message, answered_ids(state["messages"], message))
        asking = pending.asking
        calls = [call for call, _ in asking]
        decisions = (
            ask(review_request(asking), lambda answer: checked(answer, calls, by_name))
            if asking
            else []
        )
        turn = Turn()
        for call in pending.altered:
            turn.refuse(call, "refused", "agentcli", "review changed from outside", ALTERED)
        for stray in pending.strays:
            turn.note(stray, "refused", "agentcli", "not a call of the model's turn")
        allowed = allowed_tools(key, thread, state)

        def denied(call: ToolCall, args: Any) -> bool:
            """Refused when the policy of this run denies it (a resume may bring --deny)."""
            verdict = ctx.policy.decide(call["name"], args, allowed, workspace=ctx.workspace)
            if verdict.decision == "deny":
                turn.refuse(call, "denied", verdict.who, verdict.by, verdict.refusal)
            return verdict.decision == "deny"

        turn.approved = list(pending.allowed)  # audited by the review, whatever the flags now
        remember: list[str] = []
        edited: dict[str | None, dict[str, Any]] = {}
        for (call, _), decision in zip(asking, decisions, strict=True):
            who, by = decider(decision, ctx.from_clients)
            personal = who in PEOPLE
            kind = decision["type"]
            if kind == "approve":
                if denied(call, call["args"]):
                    continue
                turn.run(call, "approved" if personal else "allowed", who, by)
                if decision.get("always"):
                    remember.append(call["name"])
            elif kind == "edit":  # its arguments were checked before it was taken
                args = decision["edited_action"]["args"]
                if denied(call, args):
                    continue
                edited[call["id"]] = args
                turn.run(call, "edited", who, by, args)
            elif decision.get("message"):
                turn.refuse(
                    call, "feedback" if personal else "denied", who, by, decision["message"]
                )
            else:
                turn.refuse(call, "rejected", who, by, REJECTED)
        update = turn.update(review=None)
        if edited:  # the history shows what really ran: same message id, new arguments
            calls = [{**c, "args": edited.get(c["id"], c["args"])} for c in message.tool_calls]
            update["messages"] = [message.model_copy(update={"tool_calls": calls}), *turn.replies]
        if remember:
            update["allowed_tools"] = remember
            update["allowed_seals"] = [seal_tool(key, thread, name) for name in remember]
        seal = partial(seal_call, key, thread, step_of(config) + 1)
        return Command(update=update, goto=turn.next(seal))

    return review, approve


PEOPLE = ("person", "client")


def decider(decision: Mapping[str, Any], from_clients: bool) -> tuple[str, str]:
    """Who decided, as the audit records it. Only agentcli's own session may say a rule or
    flag did (it decides by its policy before answering); a server's client saying so is
    recorded as a client, its claim kept in `by`."""
    who, by = decision.get("who") or "person", decision.get("by") or "person"
    if from_clients and (who, by) != ("person", "person"):
        return "client", f"said {who}: {by}"[:200]
    return who, by


def _last_assistant(messages: Sequence[Any]) -> AIMessage:
    return next(m for m in reversed(messages) if isinstance(m, AIMessage))


def _refused(call: ToolCall, text: str) -> ToolMessage:
    """A call that did not run: rejected, denied, or answered with feedback."""
    return ToolMessage(text, tool_call_id=call["id"] or "", name=call["name"], status="error")


def _error(call_id: str | None, name: str, problem: str) -> ToolMessage:
    text = f"Error: {problem}. The call was not run; correct it and call again."
    return ToolMessage(text, tool_call_id=call_id or "", name=name, status="error")


def decisions_in(
    answer: Any, expected: int, allowed: Sequence[str] = DECISIONS
) -> list[Mapping[str, Any]]:
    """Check the shape of a resume value from any client before acting on it (ValueError)."""
    if isinstance(answer, str):
        answer = json.loads(answer)
    decisions = answer.get("decisions") if isinstance(answer, Mapping) else None
    if not isinstance(decisions, list) or len(decisions) != expected:
        raise ValueError(
            f'the answer must be {{"decisions": [...]}} with {expected} decision(s), one per'
            f" call in order; got {_clip(answer)}"
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
        action = decision.get("edited_action")
        if kind == "edit" and not (
            isinstance(action, Mapping) and isinstance(action.get("args"), dict)
        ):
            raise ValueError(f"decision {index}: an edit needs edited_action.args as an object")
    return decisions


UNCHANGED = "the edit changes nothing; approve the call instead"


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
) -> list[Mapping[str, Any]]:
    """The decisions in a resume value, each edit's arguments valid for its tool."""
    decisions = decisions_in(answer, len(calls), allowed)
    for index, (call, decision) in enumerate(zip(calls, decisions, strict=True), 1):
        if decision["type"] == "edit":
            args = decision["edited_action"]["args"]  # coerced in place to the schema's types
            if problem := validate_args(
                by_name.get(call["name"]), args, list(by_name), edited=True
            ):
                raise ValueError(f"decision {index} ({call['name']}): edited {problem}")
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
