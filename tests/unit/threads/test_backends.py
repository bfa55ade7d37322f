"""The Store interface on SQLite and PostgreSQL: forks, one session per thread, stale locks."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import pytest

from agentcli.config import Settings
from agentcli.config.database_url import mask_url
from agentcli.errors import AgentcliError, ConfigError, ExitCode, ThreadBusy, exit_code_for
from agentcli.policy.approval_policy import Policy
from agentcli.session import history
from agentcli.thread_rows import now
from agentcli.threads.backends import open_store
from agentcli.threads.sqlite_backend import SqliteStore
from tests.helpers.fakes import call, say
from tests.helpers.ports import reserved_port
from tests.helpers.state_schemas import use_snapshot_every


@pytest.mark.backends
def test_a_fork_rebuilds_the_same_history(make, monkeypatch: pytest.MonkeyPatch, backend) -> None:
    use_snapshot_every(monkeypatch, 3)  # so the fork's history replays across snapshots
    replies = [say("one"), call(("note", {"text": "a"})), say("two"), say("three")]
    s = make(replies, Policy.build(auto_approve=True))
    for text in ("first", "second", "third"):
        assert list(s.send(text))[-1].status == "done"
    row = s.store.resolve(s.thread_id)

    history.fork(s.store, row, "fork_at_3", 3)
    values = history.values(s.store, "fork_at_3")
    texts = [m.text for m in values["messages"]]
    assert texts == ["first", "one", "second", "", "noted 'a' x1", "two"]
    assert [a["decision"] for a in values["audit"]] == ["allowed"]
    assert s.store.resolve("fork_at_3").turns == 2

    history.fork(s.store, row, "fork_all", None)
    assert history.values(s.store, "fork_all") == s.state().values
    if backend == "postgres":  # only the blobs the fork's checkpoints point at
        count = "SELECT count(*) FROM checkpoint_blobs WHERE thread_id = ?"
        blobs = {t: s.store._execute(count, (t,)).fetchone()[0] for t in (s.thread_id, "fork_at_3")}
        assert 0 < blobs["fork_at_3"] < blobs[s.thread_id]

    s.store.close()
    fork = make([say("four")])
    fork.open("fork_at_3")
    assert list(fork.send("again"))[-1].final == "four"
    sent = [m.text for m in fork.model().calls[-1]]
    assert sent[-2:] == ["two", "again"] and "third" not in sent


@pytest.mark.backends
def test_one_session_per_thread(database: str) -> None:
    first, second = (open_store(Settings(db=database)) for _ in range(2))
    first.create("t1", "one", "/w", "m")
    first.hold("t1")
    with pytest.raises(ThreadBusy, match=rf"thread t1 is in use .*pid {os.getpid()}"):
        second.hold("t1")
    with pytest.raises(ThreadBusy, match="thread t1"):
        second.delete("t1")
    assert exit_code_for(ThreadBusy("")) == ExitCode.ERROR
    first.hold("t2")  # moving to another thread lets go of the first
    second.hold("t1")
    with pytest.raises(ThreadBusy):
        first.hold("t1")
    second.close()
    first.hold("t1")
    first.delete("t1")
    assert first.recent() == []
    first.close()


CLAIMER = """
import os, sys
from agentcli.config import Settings
from agentcli.threads.backends import open_store
open_store(Settings(db=sys.argv[1])).claim("dead", "/w", "m")
os._exit(0)  # as SIGKILL would: no clean-up, the lock left as it was
"""


@pytest.mark.backends
def test_a_claimed_thread_is_running_until_its_message_takes_it_over(database: str) -> None:
    from agentcli.session.stale_threads import settle_stale

    store, other = (open_store(Settings(db=database)) for _ in range(2))
    store.claim("t1", "/w", "m")
    [row] = other.recent()
    assert (row.thread_id, row.status, row.title, row.turns) == ("t1", "running", "(starting)", 0)
    with pytest.raises(ThreadBusy, match="thread t1 is in use"):
        other.hold("t1")
    settle_stale(other)  # held by a live process: left as it is
    assert other.resolve("t1").status == "running"
    store.create("t1", "hello", "/w2", "m2")  # its first message: the row is the thread's
    store.update("t1", turns=1)
    store.unclaim("t1")  # no longer a claim: kept
    assert (other.resolve("t1").title, other.resolve("t1").workspace) == ("hello", "/w2")

    store.claim("t2", "/w", "m")
    store.unclaim("t2")  # the run ended before its message: nothing left behind
    assert [r.thread_id for r in other.recent()] == ["t1"]

    claimer = subprocess.run([sys.executable, "-c", CLAIMER, database], capture_output=True)
    assert claimer.returncode == 0, claimer.stderr
    assert other.resolve("dead").status == "running"
    settle_stale(other)  # its process is gone: the claim is removed
    assert [r.thread_id for r in other.recent()] == ["t1"]
    store.close()
    other.close()


def dead_pid() -> int:
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def lock_row(store: SqliteStore, thread: str, pid: int, host: str, started: str | None) -> None:
    store.conn.execute(
        "INSERT INTO agentcli_locks VALUES (?, ?, ?, ?, ?)", (thread, pid, host, started, now())
    )


# Eight processes, released at once, open one database none has made yet, round after round;
# forked from a small process (a fork of a pytest worker costs 30 ms of CPU). Prints each
# round's exit codes.
OPEN_TOGETHER = """
import os, sys
from pathlib import Path
from agentcli.threads.sqlite_backend import SqliteStore

for round_ in range(20):
    path = Path(sys.argv[1]) / str(round_) / "threads.db"
    go, release = os.pipe()
    children = []
    for _ in range(8):
        pid = os.fork()
        if pid == 0:  # wait for the release (the parent closing its end), open, exit 0 or 1
            code = 1
            try:
                os.close(release)
                os.read(go, 1)
                SqliteStore(path).close()
                code = 0
            finally:
                os._exit(code)
        children.append(pid)
    os.close(go)
    os.close(release)
    print([os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) for pid in children], flush=True)
"""


def test_processes_opening_a_new_sqlite_database_together_all_open_it(tmp_path) -> None:
    """Switching a new database to WAL is a lock SQLite does not wait for: before agentcli
    waited for it, about one round in three had a process fail with "database is locked"."""
    done = subprocess.run(
        [sys.executable, "-c", OPEN_TOGETHER, str(tmp_path)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [str([0] * 8)] * 20
    for round_ in range(20):
        store = SqliteStore(tmp_path / str(round_) / "threads.db")
        assert store.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_stale_sqlite_lock_is_cleared(tmp_path) -> None:
    store = SqliteStore(tmp_path / "threads.db")
    host = socket.gethostname()
    lock_row(store, "gone", dead_pid(), host, None)  # that process has ended
    store.hold("gone")
    holder = store.conn.execute("SELECT pid FROM agentcli_locks WHERE thread_id = 'gone'")
    assert holder.fetchone()[0] == os.getpid()

    lock_row(store, "reused", os.getpid(), host, "1")  # the pid now names another process
    store.hold("reused")

    lock_row(store, "remote", dead_pid(), "elsewhere", None)  # cannot be checked from here
    with pytest.raises(ThreadBusy, match="thread remote is in use .* on elsewhere since"):
        store.hold("remote")
    store.close()
    rows = SqliteStore(tmp_path / "threads.db").conn.execute("SELECT thread_id FROM agentcli_locks")
    assert [row[0] for row in rows] == ["remote"]  # close let go of "reused"


def test_mask_url_hides_the_password_wherever_it_is() -> None:
    assert (
        mask_url("postgresql://ann:s3cret@db:5432/agents") == "postgresql://ann:***@db:5432/agents"
    )
    masked = mask_url("postgres://ann@db/agents?password=s3cret&sslmode=require")
    assert "s3cret" not in masked and "sslmode=require" in masked
    assert mask_url("postgresql://db/agents") == "postgresql://db/agents"
    assert mask_url("/home/ann/threads.db") == "/home/ann/threads.db"


def test_a_missing_postgres_extra_is_one_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)
    monkeypatch.delitem(sys.modules, "agentcli.threads.postgres_backend", raising=False)
    with pytest.raises(ConfigError, match=r"pip install 'agentcli\[postgres\]'"):
        open_store(Settings(db="postgresql://ann@localhost/agents"))


def test_a_refused_connection_names_host_and_database_never_the_password() -> None:
    port = reserved_port()
    url = f"postgresql://ann:s3cret@127.0.0.1:{port}/agents"
    with pytest.raises(AgentcliError) as error:
        open_store(Settings(db=url))
    message = str(error.value)
    assert message.startswith(f"cannot connect to PostgreSQL at 127.0.0.1:{port}/agents: ")
    assert "s3cret" not in message and "\n" not in message


@pytest.mark.backends
def test_the_thread_updated_last_within_a_second_is_the_latest(
    database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--last` and `resume` with no id: of threads updated within one second, the one
    updated last (the index kept the second alone, and ties went to the one created last)."""
    moments = iter(f"2026-11-28T12:00:00.{ms:03d}+00:00" for ms in (100, 200, 300, 400))
    monkeypatch.setattr("agentcli.threads.store.stamp", lambda: next(moments))
    store = open_store(Settings(db=database))
    try:
        store.create("older", "one", "/w", "m")
        store.create("newer", "two", "/w", "m")
        store.update("older", status="idle")  # a turn on the first thread, in that second
        assert store.latest("/w").thread_id == "older"
        assert [row.thread_id for row in store.recent()] == ["older", "newer"]
        store.update("newer", status="idle")
        assert store.latest("/w").thread_id == "newer"
    finally:
        store.close()
