"""A thread as people and programs read it: turns, each call with its decision and result
(the Markdown export, which renders them, is agentcli/ui/markdown_export.py)."""

from __future__ import annotations

import json
from typing import Any

from agentcli_tools.plurals import counted
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.messages import messages_to_dict as _to_dicts

from agentcli.events import why_cut_off
from agentcli.terminal_text import dumps
from agentcli.thread_rows import ThreadRow
from agentcli.threads.cut_off_answer import marked_cut_off
from agentcli.threads.stopped_answer import was_stopped


def entries(values: dict[str, Any]) -> list[dict[str, Any]]:
    """User and assistant turns; each call carries its audit record and its result. Where
    the thread was compacted, a `summary` entry stands before the first message the model
    is still sent: its text replaced every message above it in what the model reads."""
    messages: list[BaseMessage] = values.get("messages", [])
    audit = {record["call_id"]: record for record in values.get("audit", [])}
    results = {m.tool_call_id: m for m in messages if isinstance(m, ToolMessage)}
    compaction = values.get("compaction") or {}
    out: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        if index and index == compaction.get("upto"):
            out.append(summary_entry(compaction))
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
                call["sandbox"] = result.additional_kwargs.get("sandbox") if result else None
                if result is not None and isinstance(result.artifact, dict):
                    if isinstance(plan := result.artifact.get("plan"), list):
                        call["plan"] = plan  # each task's arguments, state and why
            entry: dict[str, Any] = {"role": "assistant", "text": message.text, "calls": calls}
            entry["interrupted"] = was_stopped(message)
            cut = marked_cut_off(message)
            entry["cut_off"] = {"reason": cut[0], "dropped_calls": cut[1]} if cut else None
            out.append(entry)
    return out


def summary_entry(compaction: dict[str, Any]) -> dict[str, Any]:
    return {
        "role": "summary",
        "text": str(compaction.get("summary", "")),
        "replaces": compaction.get("upto"),  # the messages above it, sent no more
        "reason": compaction.get("reason"),
        "at": compaction.get("at"),
    }


def speaker(entry: dict[str, Any]) -> str:
    """Who an entry is from, as the transcripts name it."""
    if entry["role"] == "summary":
        replaced = counted(entry["replaces"], "message")
        return f"summary of the {replaced} above (sent to the model instead)"
    who = "you" if entry["role"] == "user" else "assistant"
    if cut := entry.get("cut_off"):
        return f"{who} (cut off: {why_cut_off(cut['reason'])})"
    return f"{who} (interrupted)" if entry.get("interrupted") else who


def dropped_calls(entry: dict[str, Any]) -> list[str]:
    """The names of the calls a cut-off answer was writing: removed, never run."""
    return list((entry.get("cut_off") or {}).get("dropped_calls") or [])


DROPPED_NOTE = "(cut off, not run)"  # what the transcripts say of each such call


def to_json(row: ThreadRow, values: dict[str, Any]) -> str:
    """The whole thread for scripts: its index row, messages (LangChain's own dict form, which
    `messages_from_dict` reads back), audit and allowed tools; `cut_off` lists the answers
    the server cut off (`message`: the index in `messages`), as `threads show` marks them."""
    messages = values.get("messages", [])
    cut_off = [
        {"message": index, "reason": cut[0], "dropped_calls": cut[1]}
        for index, message in enumerate(messages)
        if (cut := marked_cut_off(message))
    ]
    document = {
        "format": "agentcli-thread/1",
        "thread": row.as_dict(),
        "messages": _to_dicts(messages),
        "audit": values.get("audit", []),
        "allowed_tools": values.get("allowed_tools", []),
        "compaction": values.get("compaction"),
        "cut_off": cut_off,
    }
    return dumps(document, indent=2)


def decision_text(record: dict[str, Any] | None) -> str:
    """`approved by person (terminal) at ...`, `allowed by flag --auto-approve`, ..."""
    if record is None:
        return "awaiting review"
    how = record["by"] if record["by"] == record["who"] else f"{record['who']}: {record['by']}"
    text = f"{record['decision']} by {how}"
    if record["decision"] == "edited":
        text += f"; ran with {json.dumps(record['ran_args'], ensure_ascii=False)}"
    if record.get("sandbox"):
        text += f"; sandbox {record['sandbox']}"
    return f"{text}, {record['at']}"
