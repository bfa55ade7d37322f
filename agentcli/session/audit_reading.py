"""The audit as `agentcli audit` reads it from a store: every decision of one thread or of
all (those whose index row is gone too, by their anchors), redacted as the settings say,
their chains verified, and the rules they suggest (the records and their reading:
agentcli/audit/)."""

from __future__ import annotations

from agentcli.agent.outbound import settings_redactor
from agentcli.audit.log import Entry, entries, parse_since
from agentcli.audit.suggest import Suggestion, suggestions
from agentcli.audit.verify import Verdict, verify
from agentcli.config import Settings
from agentcli.session import history
from agentcli.threads.store import Store
from agentcli.threads.store_key import ApprovalKey


def decisions(
    settings: Settings, store: Store, thread: str | None, since: str | None
) -> list[Entry]:
    """Every decision, oldest first (`since`: an ISO date/time, or 30m, 2h, 7d); a key in
    the arguments does not leave."""
    when = parse_since(since) if since else None
    redact = settings_redactor(settings)
    found = entries(history.reader(store), _threads(store, thread), when)
    return [entry.redacted(redact.value) for entry in found]


def verified(store: Store, thread: str | None) -> Verdict:
    """Every thread's audit chain recomputed with the store's key."""
    read = history.reader(store)
    return verify(store, ApprovalKey.of_store(store), _threads(store, thread), read)


def suggested(store: Store, thread: str | None, min_count: int) -> list[Suggestion]:
    """Rules for the calls a person approved by hand at least `min_count` times."""
    return suggestions(entries(history.reader(store), _threads(store, thread)), min_count)


def _threads(store: Store, thread: str | None) -> dict[str, str]:
    """The threads to read, id: workspace: one, or every thread of the index and every
    anchored one whose index row is gone (its workspace unknown)."""
    if thread:
        row = store.resolve(thread)
        return {row.thread_id: row.workspace}
    rows = {row.thread_id: row.workspace for row in store.recent()}
    return rows | {t: "" for t in store.anchored_threads() if t not in rows}
