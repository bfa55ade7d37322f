"""`threads delete --force` signals the process a thread's lock names, and the lock is data:
anyone who can write the store (a shared SQLite file, a PostgreSQL database) can make it name
any process. Each payload is a forged lock naming a process that is not the agentcli run
holding the thread; none of them may be signalled."""

from __future__ import annotations

import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from agentcli.threads.locks import start_time
from agentcli.threads.postgres_backend import LOCKS
from tests.e2e.conftest import Agent

pytestmark = pytest.mark.backends

HOST = socket.gethostname()
# (what the lock names, how it is named, what delete --force must do)
SAMPLE = 1  # one agentcli start each: every payload in the default run
PAYLOADS = [
    ("a sleep of mine", "victim", "refused"),
    ("init", "pid1", "refused"),
    ("my process, on another host", "elsewhere", "refused"),
    ("a sleep of mine, started at another time (a reused pid)", "reused", "stale"),
]


@contextmanager
def victim() -> Iterator[subprocess.Popen[bytes]]:
    process = subprocess.Popen(["sleep", "300"])
    try:
        yield process
    finally:
        process.kill()
        process.wait()


@contextmanager
def forged_lock(agent: Agent, thread: str, pid: int, host: str, started: str | None) -> Iterator:
    """A lock on `thread` naming `pid` on `host`, as the backend keeps it."""
    if "AGENTCLI_DB" not in agent.env:  # SQLite: the lock row
        store = agent.store()
        store._execute(
            "INSERT INTO agentcli_locks VALUES (?, ?, ?, ?, ?)",
            (thread, pid, host, started, "2026-01-01T00:00:00+00:00"),
        )
        store.close()
        yield
        return
    import psycopg  # PostgreSQL: an advisory lock held under an agentcli-like name

    name = f"agentcli pid {pid} on {host}"
    with psycopg.connect(agent.env["AGENTCLI_DB"], autocommit=True, application_name=name) as c:
        assert c.execute(
            f"SELECT pg_try_advisory_lock({LOCKS}, hashtext(%s))", (thread,)
        ).fetchone() == (True,)
        yield


@pytest.mark.parametrize(("what", "how", "verdict"), PAYLOADS, ids=[p[1] for p in PAYLOADS])
def test_delete_force_never_signals_a_process_a_forged_lock_names(
    agent: Agent, what: str, how: str, verdict: str
) -> None:
    store = agent.store()
    store.create("t-locked", "locked", str(agent.workspace), "m")
    store.close()
    postgres = "AGENTCLI_DB" in agent.env
    if verdict == "stale" and postgres:
        pytest.skip("PostgreSQL's locks record no start time: a live connection holds them")
    with victim() as process:
        pid = 1 if how == "pid1" else process.pid
        host = "elsewhere.example" if how == "elsewhere" else HOST
        started = "1" if how == "reused" else start_time(pid)
        with forged_lock(agent, "t-locked", pid, host, started):
            deleted = agent.run("threads", "delete", "t-locked", "--yes", "--force")
            assert process.poll() is None, f"{what}: signalled"
        assert Path(f"/proc/{pid}").exists()
    listed = agent.run("threads", "list", "--json").stdout
    if verdict == "refused":
        assert deleted.returncode == 2, deleted.stderr
        [error] = deleted.stderr.splitlines()
        assert f"pid {pid} on {host}" in error and "t-locked" in error
        assert "nothing was stopped" in error or "stop that process there" in error
        assert "t-locked" in listed
    else:  # a lock whose process is gone: cleared, the thread deleted, nothing signalled
        assert deleted.returncode == 0, deleted.stderr
        assert "t-locked" not in listed
