"""Threads on a LangGraph server, seen as the local thread index sees its own.

`ServerThreads` answers what the CLI asks of the index (`resolve` a prefix, list `recent`
threads) from the server's thread API. The index's columns live in each thread's metadata
(title, workspace, model, turns, messages, tokens, last error), written by the client that
drives the thread. A thread started elsewhere (the SDK, Agent Chat UI) has none: its title
(its first message, on one line) and its number of messages are read from its state, for
those threads only, in one more request (thread search's `extract`; a server without it
leaves them "(untitled)").
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from agentcli.errors import AgentcliError, ThreadNotFound, UsageError
from agentcli.thread_rows import ThreadRow, ThreadStatus

if TYPE_CHECKING:
    from langgraph_sdk.client import SyncLangGraphClient

GRAPH_ID = "agent"  # the graph's name in langgraph.json; the server's default assistant
SCAN = 1000  # threads read to match an id prefix
# the server's thread status, as the local index names it; "interrupted" is a review
# waiting only if the thread has interrupts (else a run was cancelled: Ctrl-C)
STATUS = {
    "idle": ThreadStatus.IDLE,
    "interrupted": ThreadStatus.AWAITING_APPROVAL,
    "error": ThreadStatus.ERROR,
    "busy": ThreadStatus.BUSY,
}
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
FIELDS: list[Any] = ["thread_id", "created_at", "updated_at", "metadata", "status"]
COUNTS = ("turns", "messages", "input_tokens", "output_tokens")
TITLE_CHARS = 60  # as a local thread's title (session/stream_events.py)
MAX_TITLE_CHARS = 200  # a title another client wrote into the metadata, cut


def connect(url: str) -> SyncLangGraphClient:
    """A client for the server at `url`; its API key, if any, from LANGGRAPH_API_KEY."""
    try:
        from langgraph_sdk import get_sync_client
    except ImportError:  # pragma: no cover - langgraph depends on langgraph-sdk
        raise UsageError("--server needs langgraph-sdk: pip install 'agentcli[server]'") from None
    if not url.startswith(("http://", "https://")):
        raise UsageError(f"--server {url}: give the server's URL (http://HOST:PORT)")
    return get_sync_client(url=url.rstrip("/"))


@contextmanager
def talking(url: str) -> Iterator[None]:
    """Turn the SDK's transport and HTTP errors into one line each."""
    import httpx

    try:
        yield
    except httpx.HTTPStatusError as exc:
        status = exc.response.status_code
        if status == 409:
            raise UsageError(
                "the thread is busy: another client is running it on the server; try again"
                " when it is done"
            ) from None
        raise AgentcliError(
            f"the LangGraph server at {url} answered {status}: {_detail(exc.response)}"
        ) from None
    except httpx.TransportError as exc:
        reason = str(exc) or type(exc).__name__
        raise AgentcliError(f"cannot reach the LangGraph server at {url}: {reason}") from None


def _detail(response: Any) -> str:
    try:
        body = response.json()
    except Exception:  # a streamed or non-JSON body
        return response.reason_phrase or "error"
    return str(body.get("detail") or body) if isinstance(body, dict) else str(body)


class ServerThreads:
    """The thread index of one LangGraph server."""

    def __init__(self, client: SyncLangGraphClient, url: str) -> None:
        self.client = client
        self.url = url

    def create(
        self, thread_id: str, title: str, workspace: str, model: str, base_url: str | None = None
    ) -> ThreadRow:
        """`base_url` is not kept: the server chooses its model and where it runs."""
        meta = {"title": title, "workspace": workspace, "model": model, "graph_id": GRAPH_ID}
        with talking(self.url):
            thread = self.client.threads.create(thread_id=thread_id, metadata=meta)
        return _row(thread)

    def update(self, thread_id: str, **fields: Any) -> None:
        with talking(self.url):
            self.client.threads.update(thread_id, metadata=fields)

    def resolve(self, id_or_prefix: str) -> ThreadRow:
        """The thread with this id, or the only one whose id starts with it."""
        prefix = id_or_prefix.strip().lower()
        if UUID.fullmatch(prefix):
            rows = self._search(ids=[prefix], limit=1)
            if rows:
                return rows[0]
            raise ThreadNotFound(f"no thread {prefix} on {self.url}")
        found = [row for row in self.recent(SCAN) if row.thread_id.startswith(prefix)]
        if not found or not prefix:
            raise ThreadNotFound(
                f"no thread matches '{id_or_prefix}' on {self.url} (agentcli threads list"
                f" --server {self.url})"
            )
        if len(found) > 1:
            ids = ", ".join(row.thread_id for row in found[:5])
            raise UsageError(f"'{id_or_prefix}' matches {len(found)} threads: {ids} ...")
        return found[0]

    def recent(
        self,
        limit: int | None = None,
        *,
        status: str | None = None,
        search: str | None = None,
        workspace: str | None = None,
    ) -> list[ThreadRow]:
        """Newest first; `search` looks in titles only (the server cannot search messages)."""
        metadata = {"graph_id": GRAPH_ID, **({"workspace": workspace} if workspace else {})}
        filtered = bool(search or status)  # here, not on the server: see STATUS
        rows = self._search(
            metadata=metadata,
            limit=limit if limit and not filtered else SCAN,
            sort_by="updated_at",
            sort_order="desc",
        )
        if filtered:
            words = (search or "").lower()
            rows = [r for r in rows if status in (None, r.status) and words in r.title.lower()]
        return rows[:limit] if limit else rows

    def _search(self, **query: Any) -> list[ThreadRow]:
        with talking(self.url):
            threads = self.client.threads.search(select=[*FIELDS, "interrupts"], **query)
            seen = self._seen([t for t in threads if "title" not in (t.get("metadata") or {})])
        return [_row(thread, seen.get(str(thread["thread_id"]))) for thread in threads]

    def _seen(self, threads: list[Mapping[str, Any]]) -> dict[str, list[Any]]:
        """The messages of threads no agentcli client indexed, by thread id."""
        if not threads:
            return {}
        ids = [str(thread["thread_id"]) for thread in threads]
        try:
            found = self.client.threads.search(
                ids=ids, limit=len(ids), select=["thread_id"], extract={"m": "values.messages"}
            )
        except Exception:  # a server without `extract`: they stay "(untitled)"
            return {}
        extracted = {str(t.get("thread_id")): (t.get("extracted") or {}).get("m") for t in found}
        return {key: value for key, value in extracted.items() if isinstance(value, list)}


def _row(thread: Mapping[str, Any], messages: list[Any] | None = None) -> ThreadRow:
    """`messages`: the thread's, when no agentcli client wrote its metadata."""
    meta = dict(thread.get("metadata") or {})
    if messages is not None:
        meta.update(title=_first_text(messages), messages=len(messages))
    counts: dict[str, Any] = {key: _count(meta.get(key)) for key in COUNTS}
    status = str(thread.get("status") or "idle")
    if status == "interrupted" and not any((thread.get("interrupts") or {}).values()):
        status = "error"
    return ThreadRow(
        thread_id=str(thread["thread_id"]),
        title=str(meta.get("title") or "(untitled)")[:MAX_TITLE_CHARS],  # any client writes it
        status=STATUS.get(status, ThreadStatus.ERROR),
        created_at=str(thread.get("created_at") or ""),
        updated_at=str(thread.get("updated_at") or ""),
        workspace=str(meta.get("workspace") or "."),
        model=str(meta.get("model") or ""),
        last_error=meta.get("last_error"),
        **counts,
    )


def _count(value: Any) -> int:
    """A count from metadata any client may have written: 0 unless a whole number."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return 0
    try:
        return max(0, int(value))
    except (ValueError, OverflowError):
        return 0


def _first_text(messages: list[Any]) -> str:
    """The first person's message of a thread, on one line, as a title."""
    for message in messages:
        if not isinstance(message, Mapping) or message.get("type") not in ("human", "user"):
            continue
        content = message.get("content")
        if isinstance(content, list):  # content parts: their text
            content = " ".join(
                str(part.get("text", "")) if isinstance(part, Mapping) else str(part)
                for part in content[:20]
            )
        return " ".join(str(content)[: TITLE_CHARS * 8].split())[:TITLE_CHARS] or "(empty)"
    return ""
