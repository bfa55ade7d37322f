"""Call digests and the lookup of a call by name: what a name may decide, and what it may not."""

from __future__ import annotations

from typing import Any

import pytest

from agentcli.cli.review_plan import ThreadAsk
from agentcli.errors import UsageError
from agentcli.session.call_digests import Ref, ThreadCalls, digest, with_digests
from agentcli.session.call_lookup import Lookup

ARGS = {"command": "echo hi", "timeout": 5}


def record(call_id: str, args: Any = ARGS, decision: str = "approved", **extra: Any) -> dict:
    return {"call_id": call_id, "tool": "shell", "args": args, "decision": decision, **extra}


def request(call_id: str, args: Any = ARGS, **extra: Any) -> dict:
    return {"id": call_id, "name": "shell", "args": args, **extra}


def test_the_digest_covers_thread_call_number_tool_and_arguments() -> None:
    base = digest("t1", "call_1", 0, "shell", ARGS)
    assert len(base) == 12 and int(base, 16) >= 0
    assert digest("t1", "call_1", 0, "shell", {"timeout": 5, "command": "echo hi"}) == base
    changed = [
        digest("t2", "call_1", 0, "shell", ARGS),
        digest("t1", "call_2", 0, "shell", ARGS),
        digest("t1", "call_1", 1, "shell", ARGS),
        digest("t1", "call_1", 0, "read_file", ARGS),
        digest("t1", "call_1", 0, "shell", {**ARGS, "command": "echo hi "}),
    ]
    assert base not in changed and len(set(changed)) == len(changed)


def test_a_name_is_a_call_id_or_a_call_id_and_its_digest() -> None:
    assert Ref.parse("call_1") == Ref("call_1")
    assert Ref.parse("call_1@ABCDEF012345") == Ref("call_1", "abcdef012345")
    assert Ref.parse("a@b@abcdef012345") == Ref("a@b", "abcdef012345")
    for bad in ("call_1@abc", "call_1@", "@abcdef012345", "call_1@abcdef01234z"):
        with pytest.raises(UsageError, match="CALL_ID@DIGEST"):
            Ref.parse(bad)


def test_a_reused_id_numbers_each_call_so_each_has_its_own_digest() -> None:
    values = {"audit": [record("call_0"), record("call_0", decision="feedback")]}
    calls = ThreadCalls("t1", values, [request("call_0")])
    digests = [seen.digest for seen in [*calls.decided, *calls.pending]]
    assert digests == [digest("t1", "call_0", n, "shell", ARGS) for n in range(3)]
    assert [[s.record["decision"] for s in call] for call in calls.calls("call_0")] == [
        ["approved"],
        ["feedback"],
    ]
    (pending,) = calls.pending
    assert len(calls.earlier("call_0", pending)) == 2
    assert with_digests("t1", values, [request("call_0")])[0]["digest"] == pending.digest


def test_a_call_cut_off_by_a_crash_is_one_call_with_its_first_decision() -> None:
    first = {"audit": [record("call_1", decision="allowed")]}
    calls = ThreadCalls("t1", first, [request("call_1", rerun="started")])
    (pending,) = calls.pending
    assert calls.earlier("call_1", pending) == []  # its own approval: no other call
    fresh = ThreadCalls("t1", first, [request("call_1")]).pending[0]
    assert len(calls.earlier("call_1", fresh)) == 1  # a new call under that id: another
    later = {"audit_pending": [record("call_1", decision="marked done", rerun="started")]}
    both = ThreadCalls("t1", {**first, **later}, [])
    (call,) = both.calls("call_1")
    assert [s.record["decision"] for s in call] == ["allowed", "marked done"]
    assert call[1].digest == pending.digest  # decided as it waited


def lookup(*threads: ThreadCalls, where: str = "in any thread") -> Lookup:
    waiting = [seen for thread in threads for seen in thread.pending]
    return Lookup(waiting, threads, where)


def test_a_bare_id_names_a_call_only_when_no_other_call_had_it() -> None:
    a = ThreadCalls("ta", {"audit": [record("call_1")]}, [])
    b = ThreadCalls("tb", {}, [request("call_1", {"command": "touch PWNED"})])
    c = ThreadCalls("tc", {}, [request("call_7")])
    with pytest.raises(UsageError, match=f"name it call_1@{b.pending[0].digest}"):
        lookup(a, b, c).find(Ref("call_1"))
    assert lookup(b, c).find(Ref("call_1")).waiting == b.pending[0]
    assert lookup(a, b, c).find(Ref("call_7")).waiting == c.pending[0]
    d = ThreadCalls("td", {}, [request("call_7")])
    with pytest.raises(UsageError, match="call_7 is pending in 2 threads"):
        lookup(c, d).find(Ref("call_7"))
    with pytest.raises(UsageError, match="no pending call 'call_9' in any thread"):
        lookup(a, b).find(Ref("call_9"))
    e = ThreadCalls("te", {"audit": [record("call_1", decision="rejected")]}, [])
    with pytest.raises(UsageError, match="names 2 decided calls"):
        lookup(a, e).find(Ref("call_1"))
    assert [s.thread_id for s in lookup(a, c).find(Ref("call_1")).decided] == ["ta"]


def test_a_digest_names_the_call_listed_and_nothing_else() -> None:
    a = ThreadCalls("ta", {"audit": [record("call_1")]}, [])
    b = ThreadCalls("tb", {}, [request("call_1", {"command": "touch PWNED"})])
    decided, waiting = a.decided[0], b.pending[0]
    assert lookup(a, b).find(Ref("call_1", waiting.digest)).waiting == waiting
    assert lookup(a, b).find(Ref("call_1", decided.digest)).decided == [decided]
    with pytest.raises(UsageError, match="may have changed since it was listed"):
        lookup(a, b).find(Ref("call_1", "0" * 12))


def test_a_call_that_changed_after_it_was_looked_up_is_refused() -> None:
    before = ThreadCalls("t1", {}, [request("call_1")])
    ask = ThreadAsk("t1", {"call_1": {"approve"}}, {"call_1": before.pending[0].digest})
    ask.check(before.pending)
    after = ThreadCalls("t1", {"audit": [record("call_1")]}, [request("call_1")])
    with pytest.raises(UsageError, match="changed while this review ran"):
        ask.check(after.pending)
    with pytest.raises(UsageError, match="no call of that id"):
        ask.check([])


def test_two_calls_waiting_under_one_id_are_not_decided_by_name() -> None:
    twice = ThreadCalls("t1", {}, [request("call_0"), request("call_0", {"command": "rm x"})])
    ask = ThreadAsk("t1", {"call_0": {"approve"}}, {"call_0": twice.pending[0].digest})
    with pytest.raises(UsageError, match="2 calls waiting under the id call_0"):
        ask.check(twice.pending)
