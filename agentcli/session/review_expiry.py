"""Reviews left waiting too long: `[approval] expire_after` and `on_expire`.

A review's age is the age of the checkpoint the thread parked at: the one saved when the
review node handed the calls to the approve node, which nothing writes again while they
wait (a refused answer, a person quitting the prompt, a listing: none saves a checkpoint).
An expired review is answered like any other, through the graph: every call rejected by
agentcli (`Decide.expired`, audited as "expired" by approval.expire_after), the model
reading why. The run stops before the tools and the model, so nothing runs then: the next
run of the thread (`run --thread ID`, a message) continues it. A call cut off by a crash is
the person's to judge (it may have partly run) and never expires.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from agentcli.config import Settings
from agentcli.config.durations import parse_duration
from agentcli.decisions import Decide, Decision
from agentcli.events import ReviewRequest

STOP_BEFORE = ["tools", "agent"]  # an expiry's run records the denial, and runs nothing


def parked_since(snapshot: Any) -> datetime | None:
    """When the thread parked at this review: its checkpoint's time (None if unknown)."""
    stamp = getattr(snapshot, "created_at", None)
    try:
        since = datetime.fromisoformat(stamp) if isinstance(stamp, str) else None
    except ValueError:
        return None
    return since.replace(tzinfo=UTC) if since and since.tzinfo is None else since


def waited(since: datetime | None, now: datetime | None = None) -> float | None:
    """Seconds since `since` (None if unknown)."""
    if since is None:
        return None
    return max(0.0, ((now or datetime.now(UTC)) - since).total_seconds())


def is_expired(settings: Settings, seconds: float | None) -> bool:
    """Whether a review that has waited `seconds` is past `expire_after` (any on_expire)."""
    if not settings.expire_after or seconds is None:
        return False
    return seconds >= parse_duration(settings.expire_after)


def expiry_decisions(
    settings: Settings, review: ReviewRequest, seconds: float | None
) -> list[Decision] | None:
    """The denials of an expired review, or None: not expired, `on_expire = "keep"`, or a
    call in it was cut off by a crash."""
    if settings.on_expire != "deny" or not is_expired(settings, seconds):
        return None
    if any(request.get("rerun") for request in review.action_requests):
        return None
    return [Decide.expired(expiry_message(settings)) for _ in review.action_requests]


def expiry_message(settings: Settings) -> str:
    return (
        f"not run: the approval request expired after {settings.expire_after} without a"
        " decision ([approval] expire_after); the call did not run and has no result"
    )
