"""The thread store a command works on, as its settings name it: a SQLite file, or a
PostgreSQL database (agentcli/threads/)."""

from __future__ import annotations

from agentcli.config import Settings
from agentcli.threads.store import Store

__all__ = ["Store", "open_store"]


def open_store(settings: Settings) -> Store:
    """The store the settings name ([storage] db, --db), opened and migrated."""
    from agentcli.threads.backends import open_store as opened

    return opened(settings)
