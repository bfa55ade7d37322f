"""A thread as people and programs read it: turns, each call with its decision and result."""

from __future__ import annotations

import json
import re
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.messages import messages_from_dict as _from_dicts
from langchain_core.messages import messages_to_dict as _to_dicts

from agentcli.store import ThreadRow
from agentcli.visible import dumps, line, visible


def entries(values: dict[str, Any]) -> list[dict[str, Any]]:
    """User and assistant turns; each call carries its audit record and its result."""
    messages: list[BaseMessage] = values.get("messages", [])
    audit = {record["call_id"]: record for record in values.get("audit", [])}
    results = {m.tool_call_id: m for m in messages if isinstance(m, ToolMessage)}
    out: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, HumanMessage):
            out.append({"role": "user", "text": message.text})
        elif isinstance(message, AIMessage):
            calls: list[dict[str, Any]] = [
                {"id": c["id"], "tool": c["name"], "args": c["args"]} for c in message.tool_calls
            ] + [
                {"id": c.get("id"), "tool": c.get("name"), "args": c.get("args")}
                for c in message.invalid_tool_calls
            ]
            for call in calls:
                result = results.get(call["id"] or "")
                call["decision"] = audit.get(call["id"])
                call["result"] = result.text if result else None
                call["status"] = result.status if result else "pending"
            out.append({"role": "assistant", "text": message.text, "calls": calls})
    return out


def to_json(row: ThreadRow, values: dict[str, Any]) -> str:
    """Everything needed to load the thread back: its index row, messages and audit."""
    document = {
        "format": "agentcli-thread/1",
        "thread": row.as_dict(),
        "messages": _to_dicts(values.get("messages", [])),
        "audit": values.get("audit", []),
        "allowed_tools": values.get("allowed_tools", []),
    }
    return dumps(document, indent=2)


def from_json(text: str) -> dict[str, Any]:
    """Load an export back: the same keys, with real message objects."""
    document = json.loads(text)
    document["messages"] = _from_dicts(document["messages"])
    return document


def to_markdown(row: ThreadRow, values: dict[str, Any]) -> str:
    """The thread to read: every untrusted string with its controls as visible marks
    (agentcli.visible), code in fences longer than any run of backticks inside."""
    about = f"{row.model} · {row.workspace} · updated {row.updated_at}"
    lines = [f"# {line(row.title)}", "", f"Thread {code_span(row.thread_id)} · {line(about)}"]
    for entry in entries(values):
        speaker = "You" if entry["role"] == "user" else "Assistant"
        if entry["text"]:
            lines += ["", f"**{speaker}:** {visible(entry['text'])}"]
        for call in entry.get("calls", []):
            decision = line(decision_text(call["decision"]))
            lines += ["", f"- tool {code_span(call['tool'])} ({decision})"]
            lines += ["", *_fenced(json.dumps(call["args"], ensure_ascii=False), "json")]
            if call["result"] is not None:
                lines += ["", *_fenced(call["result"])]
    return "\n".join(lines) + "\n"


def _fence(text: str) -> str:
    """Backticks enough that no run inside `text` closes the fence or span early."""
    longest = max((len(run) for run in re.findall("`+", text)), default=0)
    return "`" * (longest + 1)


def code_span(value: object) -> str:
    """`value` on one line as inline code that no backtick inside can end."""
    text = line(value)
    fence = _fence(text)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _fenced(text: str, info: str = "") -> list[str]:
    """A fenced code block, indented to sit in a list item."""
    shown = visible(text).removesuffix("\n").split("\n")
    fence = max(_fence(text), "```", key=len)
    return [f"  {fence}{info}", *("  " + x for x in shown), f"  {fence}"]


def decision_text(record: dict[str, Any] | None) -> str:
    """`approved by person (terminal) at ...`, `allowed by flag --auto-approve`, ..."""
    if record is None:
        return "awaiting review"
    how = record["by"] if record["by"] == record["who"] else f"{record['who']}: {record['by']}"
    text = f"{record['decision']} by {how}"
    if record["decision"] == "edited":
        text += f"; ran with {json.dumps(record['ran_args'], ensure_ascii=False)}"
    return f"{text}, {record['at']}"
