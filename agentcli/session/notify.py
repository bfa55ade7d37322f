"""Telling the person that calls wait for review: `[notify] command`, run with a JSON
description of the pending calls on its standard input.

The CLI runs it when a scripted run or review parks (exit 3: event `awaiting_approval`) and
when a review in chat has waited `[notify] after` seconds (event `review_waiting`); a server
could run it the same way. The document:

    {"event", "thread_id", "title", "workspace",
     "pending": [{"call_id", "digest"?, "tool", "args", "waiting_since"?, "rerun"?}],
     "resume": "agentcli review ID"}

The command is the person's own, run by the shell (`sh -c`, as git runs a hook) in a
session of its own: no terminal (stdin is the document, stdout and stderr are kept from the
screen), stopped with its children after `[notify] timeout` seconds. A failure is one
warning, never an error: the run's outcome (exit 3) stands.

It gets the person's environment (a webhook may need their token, notify-send their
DISPLAY), minus what is agentcli's: `AGENTCLI_*` (the database URL may hold a password),
OPENAI_API_KEY, and any variable holding the model's key or the database URL under another
name. The arguments in the document are the model's: the command must treat them as data;
like everything that leaves agentcli, the document passes the session's redactor.
"""

from __future__ import annotations

import fnmatch
import os
import signal
import subprocess
from collections.abc import Mapping
from datetime import UTC, datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from agentcli.events import RunStatus
from agentcli.terminal_text import dumps

if TYPE_CHECKING:
    from agentcli.config import Settings
    from agentcli.session.thread_session import ThreadSession


class NotifyEvent(StrEnum):
    """Why the command runs: the document's `event`."""

    PARKED = RunStatus.AWAITING_APPROVAL.value  # a scripted run or review ended with exit 3
    WAITING = "review_waiting"  # a review in chat has waited [notify] after seconds


NEVER_PASS = ("AGENTCLI_*", "OPENAI_API_KEY")
STOP_GRACE_S = 1.0  # after the timeout: how long the stopped command may take to go
_STDERR_SHOWN = 200  # characters of the command's last stderr line in the warning


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
    environ = os.environ if environ is None else environ
    secrets = (settings.api_key, settings.db_url, environ.get("OPENAI_API_KEY"))
    hidden = {value for value in secrets if value}
    return {
        name: value
        for name, value in environ.items()
        if value not in hidden and not any(fnmatch.fnmatchcase(name, p) for p in NEVER_PASS)
    }


def notify(settings: Settings, document: dict[str, Any]) -> str | None:
    """Run `[notify] command` with `document` on its stdin, if one is set. Returns why it
    failed (for one warning line), or None. Takes at most the timeout and a second."""
    command = settings.notify_command.strip()
    if not command:
        return None
    from agentcli.agent.outbound import settings_redactor

    document = settings_redactor(settings).value(document)  # the model's arguments too
    return run_command(
        command,
        (dumps(document) + "\n").encode("utf-8"),
        notify_environment(settings),
        settings.notify_timeout,
    )


def run_command(command: str, stdin: bytes, env: dict[str, str], timeout: float) -> str | None:
    """`command` by the shell, in a session of its own, fed `stdin`; why it failed, or None."""
    try:
        process = subprocess.Popen(
            command,
            shell=True,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=env,
            start_new_session=True,  # no controlling terminal; one group to stop
        )
    except (OSError, ValueError) as exc:
        return f"notify command could not start: {exc}"
    try:
        _, err = process.communicate(stdin, timeout=timeout)
    except subprocess.TimeoutExpired:
        _stop(process)
        return f"notify command did not finish within {timeout:g} s: stopped"
    if process.returncode == 0:
        return None
    status = process.returncode
    said = f"exited with status {status}" if status > 0 else f"killed by signal {-status}"
    lines = err.decode("utf-8", "replace").strip().splitlines()
    last = f": {lines[-1][:_STDERR_SHOWN]}" if lines else ""
    return f"notify command {said}{last}"


def _stop(process: subprocess.Popen[bytes]) -> None:
    """Kill the command and everything it started (its process group), then reap it."""
    try:
        if hasattr(os, "killpg"):
            os.killpg(process.pid, signal.SIGKILL)
        else:  # pragma: no cover - Windows
            process.kill()
    except OSError:  # already gone
        pass
    try:  # a child that left the group may still hold stderr: do not wait for it long
        process.communicate(timeout=STOP_GRACE_S)
    except subprocess.TimeoutExpired:
        process.kill()
        if process.stderr:
            process.stderr.close()
        process.wait()
