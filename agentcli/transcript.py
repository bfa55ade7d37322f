"""A thread as people and programs read it: turns, each call with its decision and result."""

from __future__ import annotations

import json
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.messages import messages_from_dict as _from_dicts
from langchain_core.messages import messages_to_dict as _to_dicts

from agentcli.store import ThreadRow


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
    return json.dumps(document, indent=2, ensure_ascii=False)


def from_json(text: str) -> dict[str, Any]:
    """Load an export back: the same keys, with real message objects."""
    document = json.loads(text)
    document["messages"] = _from_dicts(document["messages"])
    return document


def to_markdown(row: ThreadRow, values: dict[str, Any]) -> str:
    lines = [
        f"# {row.title}",
        "",
        f"Thread `{row.thread_id}` · {row.model} · {row.workspace} · updated {row.updated_at}",
    ]
    for entry in entries(values):
        speaker = "You" if entry["role"] == "user" else "Assistant"
        if entry["text"]:
            lines += ["", f"**{speaker}:** {entry['text']}"]
        for call in entry.get("calls", []):
            lines += ["", f"- tool `{call['tool']}` ({decision_text(call['decision'])})"]
            lines += ["", "  ```json", f"  {json.dumps(call['args'], ensure_ascii=False)}", "  ```"]
            if call["result"] is not None:
                fence = "````" if "```" in call["result"] else "```"
                lines += ["", f"  {fence}", *("  " + x for x in call["result"].splitlines())]
                lines += [f"  {fence}"]
    return "\n".join(lines) + "\n"


def decision_text(record: dict[str, Any] | None) -> str:
    """`approved by person (terminal) at ...`, `allowed by flag --auto-approve`, ..."""
    if record is None:
        return "awaiting review"
    how = record["by"] if record["by"] == record["who"] else f"{record['who']}: {record['by']}"
    text = f"{record['decision']} by {how}"
    if record["decision"] == "edited":
        text += f"; ran with {json.dumps(record['ran_args'], ensure_ascii=False)}"
    return f"{text}, {record['at']}"
