"""The durable record of each tool call's run: written before the tool starts, marked
when it ends. LangGraph re-runs a tool task whose result was not saved (the process was
killed mid-run, or just after); this record is how agentcli tells such a re-run from a
first run, and asks the person again instead of running a side effect twice in silence.

A call that runs a command also records the process supervising it (`RunProcess`: host,
boot, pid and start time), before the command starts: a re-run first makes sure that
process is gone (agent/review/cut_off_calls.py).
"""

from __future__ import annotations

import socket
from abc import abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol


@dataclass(frozen=True)
class RunProcess:
    """A process that ran a call: `pid` on `host` since boot `boot`, started at clock tick
    `started` (field 22 of /proc/<pid>/stat), so that a reused pid is not taken for it."""

    host: str
    boot: str
    pid: int
    started: str

    @classmethod
    def here(cls, pid: int, started: str) -> RunProcess:
        return cls(socket.gethostname(), boot_id(), pid, started)

    def is_here(self) -> bool:
        """On this host, since its last boot (else the process cannot be checked, or is
        gone with the boot)."""
        return self.host == socket.gethostname()


def boot_id() -> str:
    """This boot's id (Linux), "" where there is none."""
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""


class CallJournal(Protocol):
    def call_state(self, thread_id: str, call_id: str) -> str | None: ...
    def call_started(self, thread_id: str, call_id: str) -> None: ...
    def call_process(self, thread_id: str, call_id: str, process: RunProcess) -> None: ...
    def call_process_of(self, thread_id: str, call_id: str) -> RunProcess | None: ...
    def call_finished(self, thread_id: str, call_id: str) -> None: ...


class JournalTables:
    """The Store's side of it, over the `agentcli_calls` table (migrations 004_calls and
    005_call_process)."""

    @abstractmethod
    def _execute(self, sql: str, params: Sequence[Any] = ()) -> Any: ...

    def call_state(self, thread_id: str, call_id: str) -> str | None:
        """None (never ran), "started" (may have partly run) or "finished"."""
        row = self._execute(
            "SELECT state FROM agentcli_calls WHERE thread_id = ? AND call_id = ?",
            (thread_id, call_id),
        ).fetchone()
        return None if row is None else str(row[0])

    def call_started(self, thread_id: str, call_id: str) -> None:
        self._execute(
            "INSERT INTO agentcli_calls (thread_id, call_id, state, at) VALUES (?, ?,"
            " 'started', ?) ON CONFLICT (thread_id, call_id) DO UPDATE SET state = 'started',"
            " at = excluded.at, host = NULL, boot = NULL, pid = NULL, pid_started = NULL",
            (thread_id, call_id, _now()),
        )

    def call_process(self, thread_id: str, call_id: str, process: RunProcess) -> None:
        """The process that runs the started call (before what it runs starts)."""
        self._execute(
            "UPDATE agentcli_calls SET host = ?, boot = ?, pid = ?, pid_started = ?"
            " WHERE thread_id = ? AND call_id = ?",
            (process.host, process.boot, process.pid, process.started, thread_id, call_id),
        )

    def call_process_of(self, thread_id: str, call_id: str) -> RunProcess | None:
        row = self._execute(
            "SELECT host, boot, pid, pid_started FROM agentcli_calls WHERE thread_id = ?"
            " AND call_id = ?",
            (thread_id, call_id),
        ).fetchone()
        if row is None or row[2] is None:
            return None
        return RunProcess(str(row[0]), str(row[1] or ""), int(row[2]), str(row[3]))

    def call_finished(self, thread_id: str, call_id: str) -> None:
        self._execute(
            "UPDATE agentcli_calls SET state = 'finished', at = ? WHERE thread_id = ?"
            " AND call_id = ?",
            (_now(), thread_id, call_id),
        )


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
