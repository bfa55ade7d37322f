"""How threads are stored: linear growth on disk, and an exact reload (DeltaChannel)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage

from agentcli.policy.approval_policy import Policy
from tests.helpers import ROOT
from tests.helpers.fakes import call, say
from tests.helpers.state_schemas import use_snapshot_every
from tests.unit.conftest import RAN


def answer(turn: int) -> str:
    """About 1.5 KB of text, like a real assistant answer."""
    return f"Answer {turn}: " + "the result of the call, explained in a few sentences. " * 28


def db_bytes(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    wal = db.with_name(db.name + "-wal")
    return db.stat().st_size + (wal.stat().st_size if wal.exists() else 0)


def test_a_long_thread_grows_linearly(make, tmp_path: Path) -> None:
    # about 18 KB per turn (bench/README.md); plain add_messages wrote 520 KB per turn
    # at 60 turns (every checkpoint held the whole thread) and grew quadratically
    turns = 60
    replies = [m for t in range(turns) for m in (call(("note", {"text": f"t{t}"})), say(answer(t)))]
    s = make(replies, Policy.build(auto_approve=True))
    for turn in range(turns):
        assert list(s.send(f"question {turn}: " + "words " * 30))[-1].status == "done"
    assert len(s.state().values["messages"]) == 4 * turns
    assert db_bytes(tmp_path / "threads.db") / turns < 60_000


@pytest.mark.backends
@pytest.mark.parametrize("every", [None, 3])
def test_a_thread_reloads_exactly_and_resumes_from_a_fresh_store(
    make, monkeypatch: pytest.MonkeyPatch, every: int | None
) -> None:
    if every:
        use_snapshot_every(monkeypatch, every)
    s = make(
        [
            call(("note", {"text": "draft"})),
            say(answer(1)),
            call(("peek", {"path": "secret"})),
            say(answer(2)),
            call(("note", {"text": "later"})),
        ]
    )
    list(s.send("first"))
    edit = {"name": "note", "args": {"text": "final", "times": 2}}
    list(s.decide([{"type": "edit", "edited_action": edit}]))
    list(s.send("second"))
    list(s.decide([{"type": "reject", "message": "not that one"}]))
    assert list(s.send("third"))[-1].status == "awaiting_approval"
    saved = s.state().values
    s.store.close()  # the first process ends

    fresh = make([say("after")])  # a new Store on the same file, a new graph
    fresh.open(s.thread_id)
    values = fresh.state().values
    assert values["messages"] == saved["messages"]
    assert values["audit"] == saved["audit"]
    edited = next(m for m in values["messages"] if isinstance(m, AIMessage) and m.tool_calls)
    assert edited.tool_calls[0]["args"] == {"text": "final", "times": 2}
    assert len({m.id for m in values["messages"]}) == len(values["messages"]) == 10

    pending = fresh.pending()
    assert pending and pending.action_requests[0]["args"] == {"text": "later"}
    assert list(fresh.decide([{"type": "approve"}]))[-1].status == "done"
    RAN.remove({"text": "final", "times": 2})
    assert RAN == [{"text": "later", "times": 1}]
    messages = fresh.state().values["messages"]
    assert messages[:10] == saved["messages"]
    assert [m.text for m in messages[10:]] == ["noted 'later' x1", "after"]
    assert [a["decision"] for a in fresh.state().values["audit"]] == [
        "edited",
        "feedback",
        "approved",
    ]


GOAL_MB, GOAL_TURNS = 5.0, 300  # issue 26: a 300-turn thread of bench/storage.py's workload


def test_a_300_turn_thread_fits_in_5_mb_scaled_to_75_turns() -> None:
    # bench/storage.py's workload (tool turns, 1.5 KB answers) at a quarter of the turns,
    # with a full copy every quarter as many updates: the same number of copies, each a
    # quarter the size, so every part of the file scales by a quarter
    turns, every = GOAL_TURNS // 4, 250 // 4
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "storage.py"), "--sizes", str(turns)]
        + ["--repeat", "1", "--snapshot-every", str(every), "--schemas", f"every={every}"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    row = [line.split() for line in done.stdout.splitlines() if f"every={every}" in line]
    assert len(row) == 1 and row[0][0] == str(turns), done.stdout
    assert float(row[0][2]) <= GOAL_MB * turns / GOAL_TURNS, done.stdout


@pytest.mark.slow  # a smoke run of the benchmark, as the others are (tests/e2e/test_bench.py)
def test_the_storage_benchmark_runs() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "storage.py"), "--quick"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "current" in done.stdout and "baseline" in done.stdout
