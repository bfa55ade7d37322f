"""The model and server a thread runs on: recorded with the thread, used again to continue it.

A thread's index row keeps the model name and the base URL of its last run (never a key).
A command that continues a thread (review, resume, `run --thread`, `chat --last`, the inbox,
undo's fork) runs it with them, so that a hint agentcli printed works when pasted. Which
value wins, per setting:

    --model / --base-url given to this command  >  the thread's record  >  config, env, default

`OPENAI_BASE_URL`, `AGENTCLI_MODEL` and the config file are defaults for new threads: they
do not move an existing thread to another server or model; a flag does (and is recorded).

The record is read from the thread store, which other clients of a shared store
(PostgreSQL) can write. So the person's API key goes to a recorded server only when it is
the very URL their own settings name for that model: a thread that names another server
while a key is configured is refused in one line that names the flag to pass, before any
request. With no key configured there is nothing to leak, and the recorded server is used
(a local server's threads continue without flags). A URL with credentials in it (a user or
password, a query) is never recorded.
"""

from __future__ import annotations

import shlex
from dataclasses import replace
from urllib.parse import urlsplit

from agentcli.agent.model.chat_model import endpoint
from agentcli.config import Settings, for_model
from agentcli.errors import ConfigError
from agentcli.thread_rows import ThreadRow

FLAG = "flag"  # load_settings' source of a value given on the command line


def recordable(url: str) -> str | None:
    """`url` as a thread records it, or None for a URL that carries credentials."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.username or parts.password or parts.query or parts.fragment:
        return None
    return url


def recorded_server(settings: Settings) -> str | None:
    """The server a thread run with `settings` records."""
    return recordable(endpoint(settings))


def for_thread(settings: Settings, row: ThreadRow) -> Settings:
    """`settings` to continue the thread `row` with: its recorded model and server, unless
    this command's flags name others. ConfigError when the record names a server other
    than the one the person's settings name and a key would go to it."""
    flagged = settings.sources
    if row.model and flagged.get("model.name") != FLAG and row.model != settings.model:
        settings = for_model(settings, row.model)  # with its [models."GLOB"] tables
    recorded = row.base_url
    if not recorded or flagged.get("model.base_url") == FLAG:
        return settings
    configured = endpoint(settings)
    if _same(recorded, configured):
        return settings
    if settings.api_key:
        raise ConfigError(
            f"thread {row.thread_id} runs on {recorded!r}, not on the server your settings name"
            f" ({configured}), and your API key goes only to servers you name: pass"
            " --base-url URL (that server, if you trust it, or yours)"
        )
    sources = {**settings.sources, "model.base_url": f"thread {row.thread_id}"}
    return replace(settings, base_url=recorded, sources=sources)


def _same(recorded: str, configured: str) -> bool:
    """The same server, written alike but for a trailing slash: any other difference (case,
    a port written out, an encoding) counts as another server, never as this one."""
    return recorded.rstrip("/") == configured.rstrip("/")


def hint_flags(settings: Settings) -> str:
    """What a command continuing a thread run with `settings` needs besides its id, for a
    hint to work when pasted: ` --base-url URL` when this command's flag chose the server
    (the record alone would not take the person's key there). Only the person's own flag
    is repeated, never a URL read from the store."""
    if settings.sources.get("model.base_url") != FLAG or not settings.base_url:
        return ""
    return f" --base-url {shlex.quote(settings.base_url)}"
