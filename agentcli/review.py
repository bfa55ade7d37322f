"""The review node: every tool call passes here before it can run.

Invalid calls go straight back to the model; the policy allows or denies what it can;
whatever is left waits for a person in one `interrupt()` whose payload and resume value
follow LangChain v1's human-in-the-loop schema. Nothing here has side effects before the
interrupt: on resume the node re-runs from the start and must reach the same question.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, ToolCall, ToolMessage
from langchain_core.tools import BaseTool
from langgraph.graph import END
from langgraph.runtime import Runtime
from langgraph.types import Command, Send, interrupt
from pydantic import BaseModel, ValidationError

from agentcli.state import AgentState, RunContext

REJECTED = "rejected by the user"
DECISIONS = ["approve", "edit", "reject"]


def validate_args(tool: BaseTool | None, args: Any, known: Sequence[str] = ()) -> str | None:
    """Why these arguments cannot be passed to the tool, or None when they can."""
    if tool is None:
        return f"unknown tool. Available tools: {', '.join(known) or 'none'}"
    if not isinstance(args, dict):
        return "arguments must be a JSON object"
    schema = tool.tool_call_schema
    if not isinstance(schema, type) or not issubclass(schema, BaseModel):
        return None  # a JSON schema (e.g. from MCP): the tool checks its own arguments
    try:
        schema.model_validate(args)
    except ValidationError as exc:
        problems = [
            f"'{'.'.join(str(p) for p in err['loc']) or '(arguments)'}': {err['msg']}"
            for err in exc.errors()
        ]
        return "invalid arguments: " + "; ".join(problems)
    return None


def review_request(calls: Sequence[tuple[ToolCall, str]]) -> dict[str, Any]:
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
            {"action_name": call["name"], "allowed_decisions": DECISIONS} for call, _ in calls
        ],
    }


def make_review_node(tools: Sequence[BaseTool]):  # noqa: ANN201 - a LangGraph node
    by_name = {tool.name: tool for tool in tools}

    def review(state: AgentState, runtime: Runtime[RunContext]) -> Command:
        ctx = runtime.context
        message = state["messages"][-1]
        assert isinstance(message, AIMessage), "review follows an assistant message"
        replies: list[ToolMessage] = []
        approved: list[ToolCall] = []
        waiting: list[tuple[ToolCall, str]] = []
        invalid = False

        for bad in message.invalid_tool_calls:
            invalid = True
            detail = f"the arguments are not valid JSON ({bad.get('error') or 'parse error'})"
            replies.append(_error(bad.get("id") or "", bad.get("name") or "unknown", detail))
        for call in message.tool_calls:
            problem = validate_args(by_name.get(call["name"]), call["args"], list(by_name))
            if problem:
                invalid = True
                replies.append(_error(call["id"], call["name"], problem))
                continue
            verdict = ctx.policy.decide(call["name"], call["args"], state.get("allowed_tools", []))
            if verdict.decision == "allow":
                approved.append(call)
            elif verdict.decision == "deny":
                replies.append(_refused(call, verdict.refusal))
            else:
                waiting.append((call, verdict.reason))

        invalid_turns = state.get("invalid_turns", 0) + 1 if invalid else 0
        remember: list[str] = []
        edited: dict[str | None, dict[str, Any]] = {}
        if waiting:
            answer = interrupt(review_request(waiting))
            decisions = _decisions(answer, len(waiting))
            for (call, _), decision in zip(waiting, decisions, strict=True):
                kind = decision["type"]
                if kind == "approve":
                    approved.append(call)
                    if decision.get("always"):
                        remember.append(call["name"])
                elif kind == "edit":
                    args = decision["edited_action"]["args"]
                    problem = validate_args(by_name[call["name"]], args)
                    if problem:
                        replies.append(_error(call["id"], call["name"], f"edited {problem}"))
                        continue
                    edited[call["id"]] = args
                    approved.append({**call, "args": args})
                else:
                    replies.append(_refused(call, decision.get("message") or REJECTED))

        update: dict[str, Any] = {"messages": replies, "invalid_turns": invalid_turns}
        if edited:  # the history shows what really ran: same message id, new arguments
            calls = [{**c, "args": edited.get(c["id"], c["args"])} for c in message.tool_calls]
            update["messages"] = [message.model_copy(update={"tool_calls": calls}), *replies]
        if remember:
            update["allowed_tools"] = remember
        if invalid_turns >= ctx.max_invalid_turns:
            return Command(update=update, goto=END)
        if not approved:
            return Command(update=update, goto="agent")
        sends = [
            Send("tools", {"__type": "tool_call_with_context", "tool_call": call, "state": {}})
            for call in approved
        ]
        return Command(update=update, goto=sends)

    return review


def _refused(call: ToolCall, text: str) -> ToolMessage:
    """A call that did not run: rejected, denied, or answered with feedback."""
    return ToolMessage(text, tool_call_id=call["id"] or "", name=call["name"], status="error")


def _error(call_id: str | None, name: str, problem: str) -> ToolMessage:
    text = f"Error: {problem}. The call was not run; correct it and call again."
    return ToolMessage(text, tool_call_id=call_id or "", name=name, status="error")


def _decisions(answer: Any, expected: int) -> list[Mapping[str, Any]]:
    """Check a resume value from any client before acting on it."""
    if isinstance(answer, str):
        answer = json.loads(answer)
    decisions = answer.get("decisions") if isinstance(answer, Mapping) else None
    if not isinstance(decisions, list) or len(decisions) != expected:
        raise ValueError(f"review answer must hold {expected} decision(s): {answer!r}")
    for decision in decisions:
        kind = decision.get("type") if isinstance(decision, Mapping) else None
        if kind not in DECISIONS:
            raise ValueError(f"unknown review decision: {decision!r}")
        if kind == "edit" and not isinstance(decision.get("edited_action", {}).get("args"), dict):
            raise ValueError("an edit decision needs edited_action.args as an object")
    return decisions
