"""The egress proxy: the one way out of a confined command's network namespace.

With ``[sandbox] network`` listing hosts, a confined command runs in a network namespace of
its own (only a loopback interface) where Landlock lets it connect to one TCP port alone:
the proxy's listening socket, made inside that namespace by the call supervisor and handed
to this process (tools/confine.py, tools/supervised.py). Everything else in the namespace
leads nowhere: no route out, no UDP out, no unix socket (seccomp).

This process accepts on that socket, reads each request strictly (tools/proxy_request.py:
CONNECT host:port, or a whole http:// URL), checks the host and port against the list
(tools/egress.py), resolves the host once and checks its addresses (tools/addresses.py, as
fetch_url does), and connects from its own namespace to one of those very addresses: no one
looks the name up again. Then it relays bytes both ways until either side is done. A
refused request gets a 403 (a malformed one a 400) with a line saying why; every decision
is kept (``decisions``) and told (``told``), once per method kind, host, port and outcome,
and every answer of the person's, each time.

A host and port not listed is refused, unless the proxy has an ``ask`` (the chat: see
tools/egress_questions.py): then it is a question for the person, put before the name is
looked up (a lookup would already carry the name out, by DNS), one at a time, and not put
again in this command for a host and port the person refused. An IP address the person
allowed is connected to as they saw it, loopback or private as it may be, as a listed one.

What a listed host receives is not checked: a command may send it anything (the proxy
sees only the host of a tunnel, not what goes through it).
"""

from __future__ import annotations

import contextlib
import selectors
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass

from .addresses import Refused, non_public, resolve
from .egress import Hosts
from .egress_questions import Answer
from .proxy_request import HEAD_LIMIT, BadRequest, ProxyRequest, read_request

HEAD_TIMEOUT = 30.0  # seconds for a client to send its request's head
CONNECT_TIMEOUT = 10.0  # seconds to connect to one address of a host
MAX_CONNECTIONS = 64  # at once: more are closed unanswered
CHUNK = 65_536
PRIVATE = "list the address itself, or set [tools] allow_private_urls = true"
NOT_LISTED = "not in [sandbox] network"
# (how, host, port, gone) -> the answer for a host and port not listed
Ask = Callable[[str, str, int, Callable[[], bool]], Answer | None]  # None: no one asked


@dataclass(frozen=True)
class Decision:
    """What the proxy did with one kind of request: ``how`` is "CONNECT" or "HTTP"."""

    how: str
    host: str
    port: int
    allowed: bool
    why: str
    who: str = "agentcli"  # or "person": their answer to a question

    @property
    def line(self) -> str:
        verdict = "let through" if self.allowed else "refused"
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"the egress proxy {verdict} {self.how} to {host}:{self.port}: {self.why}"


class _Refusal(Exception):
    def __init__(self, status: str, why: str) -> None:
        super().__init__(why)
        self.status, self.why = status, why


class EgressProxy:
    """Serves one listening socket until ``close()``; a thread per connection."""

    def __init__(
        self,
        listener: socket.socket,
        hosts: Hosts,
        allow_private: bool = False,
        told: Callable[[Decision], None] | None = None,
        ask: Ask | None = None,
    ) -> None:
        self._listener = listener
        self._hosts = hosts
        self._allow_private = allow_private
        self._told = told
        self._ask = ask
        self._asking = threading.Lock()  # one question at a time
        self._refused: set[tuple[str, int]] = set()  # by the person, in this command
        self._lock = threading.Lock()
        self._open: set[socket.socket] = set()
        self._serving: set[threading.Thread] = set()  # a thread per connection
        self._seen: dict[tuple[str, str, int, bool] | int, Decision] = {}
        self._closed = False
        self._thread = threading.Thread(target=self._accept, name="agentcli-egress", daemon=True)

    def start(self) -> EgressProxy:
        self._thread.start()
        return self

    @property
    def decisions(self) -> list[Decision]:
        with self._lock:
            return list(self._seen.values())

    def close(self) -> None:
        """Stop accepting and cut every connection still open."""
        with self._lock:
            self._closed = True
            sockets = list(self._open)
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)  # wakes accept()
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        if self._thread.is_alive():
            self._thread.join(timeout=2.0)
        with self._lock:
            serving = list(self._serving)
        for thread in serving:  # their last decisions (a question withdrawn) told first
            thread.join(timeout=2.0)
        self._listener.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return  # closed
            with self._lock:
                if self._closed or len(self._open) >= 2 * MAX_CONNECTIONS:
                    client.close()
                    continue
                self._open.add(client)
            thread = threading.Thread(target=self._serve, args=(client,), daemon=True)
            with self._lock:
                self._serving = {t for t in self._serving if t.is_alive()} | {thread}
            thread.start()

    def _track(self, sock: socket.socket) -> bool:
        with self._lock:
            if self._closed:
                return False
            self._open.add(sock)
            return True

    def _serve(self, client: socket.socket) -> None:
        upstream: socket.socket | None = None
        try:
            client.settimeout(HEAD_TIMEOUT)
            head, extra = _read_head(client)
            request = read_request(head)
            upstream = self._open_to(request)
            if request.tunnel:
                client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            else:
                upstream.sendall(request.forwarded() + extra)
            client.settimeout(None)
            _relay(client, upstream)
        except BadRequest as exc:
            _answer(client, "400 Bad Request", str(exc))
        except _Refusal as exc:
            _answer(client, exc.status, exc.why)
        except OSError:
            pass  # the client went away, or the proxy was closed
        finally:
            for sock in (client, upstream):
                if sock is not None:
                    with self._lock:
                        self._open.discard(sock)
                    sock.close()

    def _gone(self) -> bool:
        with self._lock:
            return self._closed

    def _decide(
        self,
        request: ProxyRequest,
        allowed: bool,
        why: str,
        who: str = "agentcli",
        every: bool = False,
    ) -> Decision:
        """Keep and tell a decision: once per kind, host, port and outcome, or (``every``:
        an answer to a question) each time."""
        target = request.target
        how = "CONNECT" if request.tunnel else "HTTP"
        decision = Decision(how, target.host, target.port, allowed, why, who)
        with self._lock:
            key = len(self._seen) if every else (how, target.host, target.port, allowed)
            new = key not in self._seen
            self._seen.setdefault(key, decision)
        if new and self._told is not None:
            self._told(decision)
        return decision

    def _open_to(self, request: ProxyRequest) -> socket.socket:
        """A connection to one of the checked addresses of an allowed target."""
        target = request.target
        by_person = False  # allowed by the person's answer, not by the list
        if self._hosts.allowing(target) is None:
            answer = self._answer(request)
            decision = self._decide(request, answer.allowed, answer.why, answer.who, answer.asked)
            if not answer.allowed:
                raise _Refusal("403 Forbidden", f"agentcli: {decision.line}")
            by_person = True
        named = by_person and target.address is not None  # the address the person saw
        private = self._allow_private or named or self._hosts.names_address(target)
        try:
            addresses = resolve(target)  # once: these very addresses are connected to
        except Refused as exc:
            addresses, why = [], str(exc)
        for address in [] if private else addresses:
            if kind := non_public(address):
                addresses, why = [], f"it resolves to {address}, a {kind} address ({PRIVATE})"
                break
        if not addresses:
            decision = self._decide(request, False, why)
            raise _Refusal("403 Forbidden", f"agentcli: {decision.line}")
        if not by_person:
            self._decide(request, True, "listed in [sandbox] network")
        failure: OSError | None = None
        for address in addresses:
            try:
                upstream = socket.create_connection((str(address), target.port), CONNECT_TIMEOUT)
            except OSError as exc:
                failure = exc
                continue
            if not self._track(upstream):
                upstream.close()
                raise OSError("the proxy is closed")
            upstream.settimeout(None)
            return upstream
        raise _Refusal("502 Bad Gateway", f"cannot connect to {target.authority}: {failure}")

    def _answer(self, request: ProxyRequest) -> Answer:
        """The person's answer for a target not listed (one question at a time); a refusal
        without a question when no one is asked or they refused it in this command."""
        target = request.target
        how = "CONNECT" if request.tunnel else "HTTP"
        key = (target.host, target.port)
        if self._ask is None:
            return Answer(False, NOT_LISTED, "agentcli", False)
        with self._asking:
            if key in self._refused:
                return Answer(False, f"{NOT_LISTED}; refused by the person", "agentcli", False)
            try:
                answer = self._ask(how, target.host, target.port, self._gone)
            except Exception as exc:  # noqa: BLE001 - a question not put is a refusal
                return Answer(False, f"{NOT_LISTED}; the question failed: {exc}", "agentcli", False)
            if answer is None:  # no one to ask, and no earlier allowance
                return Answer(False, NOT_LISTED, "agentcli", False)
            if not answer.allowed and answer.who == "person":
                self._refused.add(key)
        return answer


def _read_head(client: socket.socket) -> tuple[bytes, bytes]:
    """(the head up to its blank line, what came after it); BadRequest past HEAD_LIMIT."""
    data = b""
    while b"\r\n\r\n" not in data:
        if len(data) > HEAD_LIMIT:
            raise BadRequest(f"the request's head is longer than {HEAD_LIMIT} bytes")
        chunk = client.recv(CHUNK)
        if not chunk:
            raise OSError("the client closed the connection")
        data += chunk
    end = data.index(b"\r\n\r\n") + 4
    return data[:end], data[end:]


def _answer(client: socket.socket, status: str, why: str) -> None:
    body = f"{why}\n".encode("ascii", "backslashreplace")
    head = f"HTTP/1.1 {status}\r\nContent-Type: text/plain\r\nContent-Length: {len(body)}\r\n"
    head += "Connection: close\r\n\r\n"
    with contextlib.suppress(OSError):
        client.sendall(head.encode("ascii") + body)


def _relay(client: socket.socket, upstream: socket.socket) -> None:
    """Copy bytes both ways until both sides have ended (or either fails)."""
    other = {client: upstream, upstream: client}
    with selectors.DefaultSelector() as selector:
        for sock in other:
            selector.register(sock, selectors.EVENT_READ)
        open_ends = 2
        while open_ends:
            for key, _ in selector.select():
                end: socket.socket = key.fileobj  # type: ignore[assignment]
                data = end.recv(CHUNK)
                if data:
                    other[end].sendall(data)
                    continue
                selector.unregister(end)
                open_ends -= 1
                with contextlib.suppress(OSError):
                    other[end].shutdown(socket.SHUT_WR)
