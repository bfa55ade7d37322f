"""One deadline for a whole fetch: every connect, TLS handshake, read and write it makes.

httpx's timeouts are per operation, so a server that sends a byte every few seconds resets
the read timeout each time and keeps a fetch going for ever, headers included. fetch_url
gives its client a `DeadlineTransport`: each socket operation waits at most the time left
until the fetch's deadline, and reads wait in short slices, between which the person's
interrupt (ToolContext.cancel) is checked.
"""

from __future__ import annotations

import ssl
import threading
import time
from collections.abc import Iterable
from typing import Any

import httpcore
import httpx

READ_SLICE = 0.25  # seconds a read waits before it looks at the clock and the interrupt


class Stopped(Exception):
    """The fetch ran out of time, or the person interrupted it."""

    def __init__(self, message: str, *, interrupted: bool) -> None:
        super().__init__(message)
        self.interrupted = interrupted


class Deadline:
    """The end of one fetch, and the event that interrupts it early."""

    def __init__(self, seconds: float, cancel: threading.Event | None = None) -> None:
        self.seconds = seconds
        self.end = time.monotonic() + seconds
        self.cancel = cancel

    def left(self) -> float:
        """Seconds left (more than 0), or Stopped."""
        if self.cancel is not None and self.cancel.is_set():
            raise Stopped("was interrupted", interrupted=True)
        left = self.end - time.monotonic()
        if left <= 0:
            raise Stopped(f"took longer than {self.seconds:g}s", interrupted=False)
        return left

    def bound(self, timeout: float | None) -> float:
        """`timeout` (None: no limit of its own), cut to the time left."""
        left = self.left()
        return left if timeout is None else min(timeout, left)


class _Stream(httpcore.NetworkStream):
    """A connection whose every operation ends by the deadline."""

    def __init__(self, inner: httpcore.NetworkStream, deadline: Deadline) -> None:
        self._inner = inner
        self._deadline = deadline

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        started = time.monotonic()
        while True:
            wait = self._deadline.bound(READ_SLICE)
            if timeout is not None:
                rest = timeout - (time.monotonic() - started)
                if rest <= 0:
                    raise httpcore.ReadTimeout(f"no data for {timeout:g}s")
                wait = min(wait, rest)
            try:
                return self._inner.read(max_bytes, wait)
            except httpcore.ReadTimeout:
                continue  # a slice passed with nothing: look at the clock and the interrupt

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, self._deadline.bound(timeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        bounded = self._deadline.bound(timeout)
        return _Stream(self._inner.start_tls(ssl_context, server_hostname, bounded), self._deadline)

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _Backend(httpcore.SyncBackend):
    def __init__(self, deadline: Deadline) -> None:
        self._deadline = deadline

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        bounded = self._deadline.bound(timeout)
        stream = super().connect_tcp(host, port, bounded, local_address, socket_options)
        return _Stream(stream, self._deadline)


class DeadlineTransport(httpx.HTTPTransport):
    """httpx's own transport (its error mapping, its response streams), over connections
    made by a backend that holds `deadline`. HTTP/1.1 only, no proxy."""

    def __init__(self, deadline: Deadline, verify: ssl.SSLContext | bool = True) -> None:
        context = httpx.create_ssl_context(verify=verify, trust_env=False)
        super().__init__(verify=context, trust_env=False)
        # httpx builds its pool with the default backend and takes no other: replace it
        self._pool = httpcore.ConnectionPool(
            ssl_context=context, network_backend=_Backend(deadline)
        )
