"""Which reviews expire, what the model and the audit are told, and what the inbox shows."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

from agentcli.audit.records import decider, refusal_kind
from agentcli.config import Settings
from agentcli.decisions import EXPIRED_BY, Decide
from agentcli.events import ReviewRequest
from agentcli.session.inbox import main_argument
from agentcli.session.review_expiry import expiry_decisions, is_expired, parked_since, waited

REVIEW = ReviewRequest("t", [{"id": "call_1", "name": "shell", "args": {"command": "ls"}}])


def test_only_a_review_past_expire_after_is_denied_and_only_with_deny() -> None:
    assert expiry_decisions(Settings(), REVIEW, 10**9) is None  # unset: waits for ever
    settings = Settings(expire_after="30m")
    assert expiry_decisions(settings, REVIEW, 1799) is None
    assert expiry_decisions(settings, REVIEW, None) is None  # age unknown: kept
    [decision] = expiry_decisions(settings, REVIEW, 1800) or []
    assert decision["type"] == "reject" and "expired after 30m" in decision["message"]
    assert (decision["who"], decision["by"]) == ("agentcli", EXPIRED_BY)
    kept = Settings(expire_after="30m", on_expire="keep")
    assert expiry_decisions(kept, REVIEW, 1800) is None and is_expired(kept, 1800)


def test_a_call_cut_off_by_a_crash_never_expires() -> None:
    rerun = ReviewRequest("t", [{**REVIEW.action_requests[0], "rerun": "started"}])
    assert expiry_decisions(Settings(expire_after="1s"), rerun, 60) is None


def test_the_audit_names_an_expiry_only_when_agentcli_decided_it() -> None:
    who, by = decider(Decide.expired("x"), from_clients=False)
    assert refusal_kind(who, by, True) == "expired"
    # a LangGraph server's client claiming the setting is recorded as a client's feedback
    who, by = decider(Decide.expired("x"), from_clients=True)
    assert (who, refusal_kind(who, by, True)) == ("client", "feedback")
    assert refusal_kind("person", "person", False) == "rejected"
    assert refusal_kind("policy", "deny rule", True) == "denied"


def test_the_age_of_a_review_is_its_checkpoints() -> None:
    stamp = (datetime.now(UTC) - timedelta(minutes=5)).isoformat()
    since = parked_since(SimpleNamespace(created_at=stamp))
    assert since is not None and 299 <= (waited(since) or 0) <= 310
    assert parked_since(SimpleNamespace(created_at=None)) is None
    assert parked_since(SimpleNamespace(created_at="not a time")) is None


def test_the_main_argument_of_a_call() -> None:
    assert main_argument("shell", {"command": "git status"}) == "git status"
    assert main_argument("write_file", {"path": "a.md", "content": "x"}) == "a.md"
    assert main_argument("fetch_url", {"url": "https://example.com/x"}) == "https://example.com/x"
    assert main_argument("calculator", {"expression": "1+1"}) == '{"expression": "1+1"}'
    long = main_argument("mcp__tool", {"text": "y" * 500})
    assert len(long) == 120 and long.endswith("…")
    assert main_argument("shell", {"command": 5}) == '{"command": 5}'  # not a string: as JSON
