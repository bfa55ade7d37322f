"""The `storage.db` setting as people may see it: a file path, or a URL whose password is
masked wherever it appears."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from agentcli.config import POSTGRES_SCHEMES, Settings


def database_label(settings: Settings) -> str:
    """Where the threads live, fit to print: the URL's password is masked."""
    return mask_url(settings.db_url) if settings.db_url else str(settings.db_path)


def mask_url(text: str) -> str:
    """A database URL with its password (in the user part or the query) masked."""
    if not text.startswith(POSTGRES_SCHEMES):
        return text
    try:
        parts = urlsplit(text)
    except ValueError:
        return text.partition("://")[0] + "://(not a valid URL)"
    netloc = parts.netloc
    if parts.password is not None:
        user, _, host = netloc.rpartition("@")
        netloc = f"{user.partition(':')[0]}:***@{host}"
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    query = [(key, "***" if key == "password" else value) for key, value in pairs]
    return urlunsplit(parts._replace(netloc=netloc, query=urlencode(query, safe="*/:")))
