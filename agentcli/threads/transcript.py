"""A thread as people and programs read it: turns, each call with its decision and result."""

from __future__ import annotations

import json
import re
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.messages import messages_to_dict as _to_dicts

from agentcli.terminal_text import dumps, line, visible
from agentcli.threads.stopped_answer import was_stopped
from agentcli.threads.thread_rows import ThreadRow


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
        return f"summary of the {entry['replaces']} messages above (sent to the model instead)"
    who = "you" if entry["role"] == "user" else "assistant"
    return f"{who} (interrupted)" if entry.get("interrupted") else who


def to_json(row: ThreadRow, values: dict[str, Any]) -> str:
    """The whole thread for scripts: its index row, messages (LangChain's own dict form, which
    `messages_from_dict` reads back), audit and allowed tools."""
    document = {
        "format": "agentcli-thread/1",
        "thread": row.as_dict(),
        "messages": _to_dicts(values.get("messages", [])),
        "audit": values.get("audit", []),
        "allowed_tools": values.get("allowed_tools", []),
        "compaction": values.get("compaction"),
    }
    return dumps(document, indent=2)


def to_markdown(row: ThreadRow, values: dict[str, Any]) -> str:
    """The thread to read, as CommonMark in which no untrusted text is markup: every
    untrusted string has its controls as visible marks (agentcli.terminal_text); messages are
    block quotes and one-line fields are plain text, each with its Markdown punctuation
    escaped (so no text opens a comment, HTML, a heading, a list, a link or a fence, or
    underlines the line before it); code sits in fences longer than any backtick run inside.
    So a viewer shows exactly the entries agentcli wrote, and each text as it is."""
    about = f"{row.model} · {row.workspace} · updated {row.updated_at}"
    lines = [f"# {inert(row.title)}", "", f"Thread {code_span(row.thread_id)} · {inert(about)}"]
    for entry in entries(values):
        who = speaker(entry)
        if entry["text"]:
            lines += ["", f"**{inert(who[0].upper() + who[1:])}:**", "", *quoted(entry["text"])]
        for call in entry.get("calls", []):
            decision = inert(decision_text(call["decision"]))
            lines += ["", f"- tool {code_span(call['tool'])} ({decision})"]
            lines += ["", *_fenced(dumps(call["args"]), "json")]
            if call["result"] is not None:
                lines += ["", *_fenced(call["result"])]
    return "\n".join(lines) + "\n"


# The ASCII punctuation that is markup anywhere in a line, in CommonMark or GitHub's
# Markdown: escapes, code, emphasis, strikethrough and fences, links, images, footnotes and
# reference definitions, HTML, autolinks and quotes, entities, headings, tables, math.
# CommonMark reads a backslash before any ASCII punctuation as that character.
_MARKUP = re.compile(r"[\\`*_~\[\]<>&#|$]")
# ... and what is markup only where it stands: a list item, setext underline or rule at the
# start of a line (`-`, `+`, `=`), an ordered list item (`1.`, `2)`), an emoji code (`:x:`).
_PLACED = re.compile(r"(?m)^([ \t]*[0-9]{0,9})([-+=.)])|:(?=[\w+-]+:)")


def inert(text: object, multiline: bool = False) -> str:
    """Untrusted text as Markdown that shows as that text: marks for controls, one line
    unless `multiline`, every punctuation character that could be markup escaped."""
    escaped = _MARKUP.sub(r"\\\g<0>", visible(text, multiline=multiline))
    return _PLACED.sub(lambda m: f"{m[1]}\\{m[2]}" if m[2] else "\\:", escaped)


def quoted(text: str) -> list[str]:
    """A message as a block quote: each of its lines inert, none able to end the quote."""
    return [f"> {shown}" if shown else ">" for shown in inert(text, multiline=True).split("\n")]


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
    if record.get("sandbox"):
        text += f"; sandbox {record['sandbox']}"
    return f"{text}, {record['at']}"
