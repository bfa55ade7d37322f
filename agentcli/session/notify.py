"""Telling the person that calls wait for review: `[notify] command`, run with a JSON
description of the pending calls on its standard input.

The CLI runs it when a scripted run or review parks (exit 3: event `awaiting_approval`) and
when a review in chat has waited `[notify] after` seconds (event `review_waiting`); a server
could run it the same way. The document:

    {"event", "thread_id", "title", "workspace",
     "pending": [{"call_id", "digest"?, "tool", "args", "waiting_since"?, "rerun"?}],
     "resume": "agentcli review ID"}

The command is the person's own, run as a hook is (hooks/command_run.py: by the shell, in
a session of its own, no terminal, stopped with its children after `[notify] timeout`
seconds, with the person's environment minus agentcli's secrets). A failure is one warning,
never an error: the run's outcome (exit 3) stands.

The arguments in the document are the model's: the command must treat them as data; like
everything that leaves agentcli, the document passes the session's redactor.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentcli.events import RunStatus
from agentcli.hooks.command_run import person_environment
from agentcli.hooks.command_run import run_command as run
from agentcli.hooks.hook_set import hook_set
from agentcli.hooks.turn_events import notified
from agentcli.terminal_text import dumps

if TYPE_CHECKING:
    from agentcli.config import Settings
    from agentcli.session.thread_session import ThreadSession


class NotifyEvent(StrEnum):
    """Why the command runs: the document's `event`."""

    PARKED = RunStatus.AWAITING_APPROVAL.value  # a scripted run or review ended with exit 3
    WAITING = "review_waiting"  # a review in chat has waited [notify] after seconds


def now() -> str:
    """The time, as waiting_since gives it (ISO 8601, UTC, whole seconds)."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def pending_document(
    event: NotifyEvent,
    session: ThreadSession,
    pending: list[dict[str, Any]],
    since: str | None = None,
) -> dict[str, Any]:
    """What the notify command reads: the thread and its calls awaiting review. `since`:
    when they began to wait, if known (a call's own `waiting_since` wins)."""
    row = session.row
    workspace = row.workspace if row else str(session.workspace or "")
    calls = []
    for request in pending:
        call: dict[str, Any] = {
            "call_id": request["id"],
            **({"digest": request["digest"]} if request.get("digest") else {}),
            "tool": request["name"],
            "args": request["args"],
        }
        if waited := request.get("waiting_since") or since:
            call["waiting_since"] = waited
        if request.get("rerun"):  # cut off by a crash: it may have partly run
            call["rerun"] = request["rerun"]
        calls.append(call)
    return {
        "event": event,
        "thread_id": session.thread_id,
        "title": row.title if row else "",
        "workspace": workspace,
        "pending": calls,
        "resume": f"agentcli review {session.thread_id}{session.hint_flags}",
    }


def notify_environment(
    settings: Settings, environ: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The person's environment without agentcli's secrets (see the module's docstring)."""
    return person_environment((settings.api_key, settings.db_url), environ)


def notify(settings: Settings, document: dict[str, Any]) -> str | None:
    """Run `[notify] command` with `document` on its stdin, if one is set. Returns why it
    failed (for one warning line), or None. Takes at most the timeout and a second."""
    from agentcli.agent.outbound import settings_redactor

    redactor = settings_redactor(settings)
    _notification_hooks(settings, redactor, document)
    command = settings.notify_command.strip()
    if not command:
        return None
    document = redactor.value(document)  # the model's arguments too
    return run_command(
        command,
        (dumps(document) + "\n").encode("utf-8"),
        notify_environment(settings),
        settings.notify_timeout,
    )


def _notification_hooks(settings: Settings, redactor: Any, document: dict[str, Any]) -> None:
    """The person's Notification hooks, told that calls wait (their replies are not read)."""
    hooks = hook_set(settings, (settings.api_key, settings.db_url), redactor.value)
    names = ", ".join(sorted({str(call.get("tool")) for call in document.get("pending", [])}))
    message = f"agentcli needs your permission to use {names or 'a tool'}"
    workspace = Path(document.get("workspace") or ".")
    notified(hooks, message, str(document.get("thread_id", "")), workspace)


def run_command(command: str, stdin: bytes, env: dict[str, str], timeout: float) -> str | None:
    """`command` by the shell (hooks/command_run.py), fed `stdin`; why it failed, or None."""
    finished = run(command, stdin, env, timeout)
    return None if finished.status == 0 else f"notify command {finished.said()}"
