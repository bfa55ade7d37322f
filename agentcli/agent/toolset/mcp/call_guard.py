"""One MCP exchange that always ends: within its time limit, at Ctrl-C, or when the server
goes away, whichever comes first.

The MCP SDK waits for an answer as long as the server keeps quiet, and over streamable HTTP
it does not notice a server that dies mid-call: the response stream breaks, the SDK logs it
and keeps waiting for an answer that cannot come. So every exchange (a session opened, its
request sent, the answer read) runs as a task watched from here:

- its time limit (`[mcp.servers.NAME] timeout`, DEFAULT_TIMEOUT seconds) ends it;
- the run's `cancel` event (Ctrl-C in the chat: RunContext.cancel) ends it within POLL_S;
- a `Watch` sees the HTTP connection break (the server died, or dropped the connection)
  and ends it at once; a stdio server that exits closes its pipe, which the SDK reports.

Ending it cancels the task: the SDK then closes the session, and a stdio server is
terminated (its process tree killed when it does not exit). A cleanup that itself hangs is
given up after CLEANUP_S.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

import httpx

T = TypeVar("T")

DEFAULT_TIMEOUT = 120.0  # seconds, when [mcp.servers.NAME] sets no timeout
POLL_S = 0.05  # how soon a Ctrl-C is seen
CLEANUP_S = 5.0  # how long a stopped exchange may take to close its session


class CallStopped(Exception):
    """The exchange did not end by itself; the message says why (for the model to read)."""


class TimedOut(CallStopped):
    """The exchange's time was up."""


class Watch:
    """Notices when an HTTP connection to the server breaks. `factory` is an httpx client
    factory for langchain-mcp-adapters; every response stream of its clients is watched."""

    def __init__(self) -> None:
        self.broken = asyncio.Event()
        self.reason = ""

    def breaks(self, error: BaseException) -> None:
        if not self.broken.is_set():
            self.reason = " ".join(str(error).split()) or type(error).__name__
            self.broken.set()

    def factory(
        self,
        headers: dict[str, str] | None = None,
        timeout: httpx.Timeout | None = None,
        auth: httpx.Auth | None = None,
    ) -> httpx.AsyncClient:
        """An httpx client as the MCP SDK makes its own, over a watched transport."""
        return httpx.AsyncClient(
            headers=headers,
            timeout=timeout or httpx.Timeout(30.0, read=300.0),
            auth=auth,
            transport=_WatchedTransport(httpx.AsyncHTTPTransport(), self),
        )


class _WatchedTransport(httpx.AsyncBaseTransport):
    def __init__(self, inner: httpx.AsyncBaseTransport, watch: Watch) -> None:
        self.inner = inner
        self.watch = watch

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        try:
            response = await self.inner.handle_async_request(request)
        except httpx.TransportError as exc:
            self.watch.breaks(exc)
            raise
        response.stream = _WatchedStream(response.stream, self.watch)
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


class _WatchedStream(httpx.AsyncByteStream):
    def __init__(self, inner: Any, watch: Watch) -> None:
        self.inner = inner
        self.watch = watch

    async def __aiter__(self) -> Any:
        try:
            async for chunk in self.inner:
                yield chunk
        except httpx.TransportError as exc:  # cut mid-body: the server is gone
            self.watch.breaks(exc)
            raise

    async def aclose(self) -> None:
        await self.inner.aclose()


async def guarded(
    work: Coroutine[Any, Any, T],
    *,
    timeout: float,
    cancel: threading.Event | None,
    watch: Watch | None = None,
) -> T:
    """The result of `work`, or CallStopped when its time is up, `cancel` is set or the
    watched connection breaks; its own errors are raised as they are."""
    task = asyncio.ensure_future(work)
    broken = asyncio.ensure_future((watch or Watch()).broken.wait())
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    try:
        while not task.done():
            left = deadline - loop.time()
            if left <= 0:
                raise TimedOut(f"no answer within {timeout:g} s: the call was stopped")
            if cancel is not None and cancel.is_set():
                raise CallStopped("interrupted by the user (Ctrl-C): the call was stopped")
            await asyncio.wait({task, broken}, timeout=min(POLL_S, left))
            if broken.done() and not task.done() and watch is not None:
                raise CallStopped(f"the connection broke mid-call ({watch.reason})")
        return task.result()
    finally:
        broken.cancel()
        if not task.done():
            task.cancel()
            await asyncio.wait({task}, timeout=CLEANUP_S)
        if task.done() and not task.cancelled():
            task.exception()  # retrieved: an error after the stop is not worth a warning
