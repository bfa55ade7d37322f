"""A span's attributes, from what the graph streams: the model's turn (an AIMessage), a
tool's result (a ToolMessage), an audit record (a decision, and who made it).

Names follow OpenTelemetry's GenAI conventions where they have one (`gen_ai.*`), agentcli's
own otherwise (`agentcli.*`). What a tool was given or printed is never an attribute: its
size and its arguments' names are (docs/telemetry.md). Every value is redacted when it is
exported (otlp_export.py), not here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage

from agentcli.agent.toolset.sandboxing import SHELL

# an audit record's decision (audit/records.py, agent/review/) as the review's answer
APPROVE = ("allowed", "approved", "approved again", "substituted")
DECISIONS = {"edited": "edit", "feedback": "feedback", "marked done": "done"}
_EXIT = re.compile(r"exit code (-?\d+)")


def decision_of(outcome: str) -> str:
    """approve, edit, reject, feedback (a rejection with a message for the model), or done
    (a call cut off by a crash, marked as having run)."""
    return "approve" if outcome in APPROVE else DECISIONS.get(outcome, "reject")


def review_facts(record: Mapping[str, Any]) -> dict[str, Any]:
    """An audit record's decision, who made it (person, client, rule, flag, mode, hook,
    agentcli) and by what (the rule, the flag, the hook's command)."""
    outcome = str(record.get("decision"))
    facts = {
        "agentcli.review.decision": decision_of(outcome),
        "agentcli.review.outcome": outcome,
        "agentcli.review.who": str(record.get("who")),
        "agentcli.review.by": str(record.get("by"))[:200],
        "gen_ai.tool.name": str(record.get("tool")),
        "gen_ai.tool.call.id": str(record.get("call_id")),
    }
    if record.get("sandbox"):  # run outside the sandbox: why
        facts["agentcli.review.unconfined"] = str(record["sandbox"])[:200]
    return facts


def call_facts(call: Mapping[str, Any]) -> dict[str, Any]:
    """A tool call about to run: its name, id, and the size and names of its arguments."""
    args = call.get("args")
    facts: dict[str, Any] = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": str(call.get("name")),
        "gen_ai.tool.call.id": str(call.get("id")),
        "agentcli.tool.argument_bytes": _size(args),
    }
    if isinstance(args, Mapping):
        facts["agentcli.tool.argument_names"] = [str(name)[:100] for name in list(args)[:50]]
    return facts


def result_facts(message: ToolMessage) -> tuple[dict[str, Any], str | None]:
    """A tool's result: its status, sandbox, exit code (shell) and size; and the error's
    kind when it failed (None when it did not)."""
    label = str(message.additional_kwargs.get("sandbox") or "")
    text = message.text
    facts: dict[str, Any] = {
        "agentcli.tool.status": "error" if message.status == "error" else "ok",
        "agentcli.tool.sandbox": sandbox_kind(label),
        "agentcli.tool.output_chars": len(text),
    }
    if label:
        facts["agentcli.tool.sandbox_detail"] = label[:200]
    first = text.split("\n", 1)[0]
    exit_code = _EXIT.fullmatch(first.split(" (", 1)[0]) if message.name == SHELL else None
    if exit_code:
        facts["process.exit.code"] = int(exit_code.group(1))
    if message.status != "error":
        return facts, None
    if exit_code:
        return facts, "exit_code"
    if message.name == SHELL and first.startswith("timed out"):
        return facts, "timeout"
    if first.startswith("interrupted"):
        return facts, "interrupted"
    return facts, "tool_error"


def sandbox_kind(label: str) -> str:
    """confined, unconfined (the sandbox lifted for this call, or off) or none (a call the
    sandbox does not govern): from the label the tools node gives a shell call's result."""
    if not label:
        return "none"
    return "unconfined" if label.startswith("off") else "confined"


def model_facts(message: AIMessage) -> dict[str, Any]:
    """A model turn: tokens in and out, why it finished, the model that answered, and how
    many calls it made."""
    meta = message.response_metadata or {}
    facts: dict[str, Any] = {"agentcli.model.tool_calls": len(message.tool_calls)}
    usage = message.usage_metadata
    if usage:
        facts["gen_ai.usage.input_tokens"] = int(usage.get("input_tokens") or 0)
        facts["gen_ai.usage.output_tokens"] = int(usage.get("output_tokens") or 0)
        if meta.get("usage_estimated"):
            facts["agentcli.usage.estimated"] = True
    finish = meta.get("finish_reason") or ("truncated" if meta.get("truncated") else None)
    if finish:
        facts["gen_ai.response.finish_reasons"] = [str(finish)[:50]]
    if meta.get("model_name"):
        facts["gen_ai.response.model"] = str(meta["model_name"])[:200]
    return facts


def messages_in(result: Any, kind: type) -> list[Any]:
    """The messages of `kind` a task wrote (one write, or several: LangGraph's `$writes`)."""
    written = result.get("messages") if isinstance(result, Mapping) else None
    if isinstance(written, Mapping) and isinstance(written.get("$writes"), list):
        written = [m for write in written["$writes"] for m in _listed(write)]
    return [m for m in _listed(written) if isinstance(m, kind)]


def records_in(result: Any) -> list[Mapping[str, Any]]:
    """The audit records a task wrote."""
    written = result.get("audit") if isinstance(result, Mapping) else None
    if isinstance(written, Mapping) and isinstance(written.get("$writes"), list):
        written = [r for write in written["$writes"] for r in _listed(write)]
    return [r for r in _listed(written) if isinstance(r, Mapping) and "call_id" in r]


def _listed(value: Any) -> list[Any]:
    if isinstance(value, list | tuple):
        return list(value)
    return [] if value is None else [value]


def _size(value: Any) -> int:
    try:
        return len(json.dumps(value, ensure_ascii=False, default=str).encode())
    except (TypeError, ValueError):
        return 0
