"""The backend `storage.db` names, opened: PostgreSQL for a postgresql:// URL, else SQLite."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentcli.errors import ConfigError

if TYPE_CHECKING:
    from agentcli.config import Settings
    from agentcli.threads.store import Store


def open_store(settings: Settings) -> Store:
    """The store `storage.db` names: a postgresql:// URL, or else a SQLite file."""
    if settings.db_url:
        try:
            from agentcli.threads.postgres_backend import PostgresStore
        except ImportError as exc:
            raise ConfigError(
                f"a postgresql:// database needs {exc.name or 'psycopg'}:"
                " pip install 'agentcli[postgres]'"
            ) from None
        return PostgresStore(settings.db_url)
    from agentcli.threads.sqlite_backend import SqliteStore

    return SqliteStore(settings.db_path)
