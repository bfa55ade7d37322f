"""A thread's history as the updates an editor gets when it loads the session: each message
of the person and the model, each call with its result (or still pending)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from acp.helpers import update_agent_message_text, update_user_message_text

from agentcli.acp import tool_calls
from agentcli.session.transcript import entries


def history(values: dict[str, Any], workspace: Path | None) -> Iterator[Any]:
    for entry in entries(values):
        if entry["role"] == "summary":  # the messages it summarises are all replayed
            continue
        if entry["role"] == "user":
            yield update_user_message_text(entry["text"])
            continue
        if entry["text"]:
            yield update_agent_message_text(entry["text"])
        for call in entry.get("calls", []):
            call = {"id": call["id"], "name": call["tool"], "args": call["args"], **call}
            yield tool_calls.started(call, workspace if call["status"] == "pending" else None)
            if call["result"] is not None:
                failed = call["status"] == "error"
                yield tool_calls.finished(str(call["id"]), call["result"], failed)
