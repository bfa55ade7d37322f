"""The egress proxy in process (tools/egress.py, tools/proxy_request.py, tools/egress_proxy.py):
the `[sandbox] network` entries as the config reads them, and what the proxy does with each
request, against an upstream server on 127.0.0.1 that counts the connections it gets.

The proxy listens on 127.0.0.1 here (in a command's run it listens in the command's own
network namespace): every request is a client's bytes, sent raw."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from agentcli_tools.egress import Hosts, entry_problem, parse_entry
from agentcli_tools.egress_proxy import Decision, EgressProxy
from agentcli_tools.proxy_request import BadRequest, read_request
from agentcli_tools.urls import UnsafeURL

GOOD_ENTRIES = {
    "pypi.org": ("pypi.org", (80, 443), False),
    "PyPI.org.": ("pypi.org", (80, 443), False),
    "*.npmjs.org": ("npmjs.org", (80, 443), True),
    "127.0.0.1:8080": ("127.0.0.1", (8080,), False),
    "[::1]:3000": ("::1", (3000,), False),
    "files.pythonhosted.org:443": ("files.pythonhosted.org", (443,), False),
    "bücher.example": ("xn--bcher-kva.example", (80, 443), False),
}
BAD_ENTRIES = [
    "",
    "*",
    "https://pypi.org",
    "pypi.org/simple",
    "user@pypi.org",
    "pypi.org:0",
    "pypi.org:99999",
    "pypi%2eorg",
    "py*.org",
    "*.*.org",
    "*.127.0.0.1",
    "pypi.org?x",
    "pypi .org",
    "pypi.org\\@evil",
    "[::1",
]


@pytest.mark.parametrize("text", GOOD_ENTRIES)
def test_an_entry_is_read_as_fetch_url_reads_hosts(text: str) -> None:
    entry = parse_entry(text)
    assert (entry.host, entry.ports, entry.suffix) == GOOD_ENTRIES[text]
    assert entry_problem(text) is None


@pytest.mark.parametrize("text", BAD_ENTRIES)
def test_a_bad_entry_is_refused_with_a_reason(text: str) -> None:
    with pytest.raises(UnsafeURL):
        parse_entry(text)
    assert entry_problem(text)


def test_a_wildcard_covers_hosts_under_it_only() -> None:
    hosts = Hosts.parse(["*.npmjs.org", "pypi.org"])

    def allows(host: str, port: int = 443) -> bool:
        request = read_request(f"CONNECT {host}:{port} HTTP/1.1\r\n\r\n".encode())
        return hosts.allowing(request.target) is not None

    assert allows("registry.npmjs.org") and allows("a.b.npmjs.org") and allows("pypi.org", 80)
    assert not allows("npmjs.org") and not allows("evilnpmjs.org")
    assert not allows("registry.npmjs.org.evil.com") and not allows("pypi.org.evil.com")
    assert not allows("pypi.org", 22) and not allows("pypi.org", 8443)


@dataclass
class Upstream:
    """A TCP server on 127.0.0.1 answering MARK to each connection, counting them."""

    port: int
    connections: list[bytes]


MARK = b"HTTP/1.1 200 OK\r\nContent-Length: 8\r\nConnection: close\r\n\r\nUPSTREAM"


@pytest.fixture
def upstream() -> Iterator[Upstream]:
    server = socket.create_server(("127.0.0.1", 0))
    found = Upstream(server.getsockname()[1], [])

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(5)
                try:
                    found.connections.append(conn.recv(65536))
                    conn.sendall(MARK)
                except OSError:
                    pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield found
    server.shutdown(socket.SHUT_RDWR)
    server.close()
    thread.join()


@dataclass
class Proxy:
    port: int
    told: list[Decision]
    proxy: EgressProxy


def start_proxy(entries: list[str], allow_private: bool = False) -> Proxy:
    listener = socket.create_server(("127.0.0.1", 0))
    told: list[Decision] = []
    proxy = EgressProxy(listener, Hosts.parse(entries), allow_private, told.append).start()
    return Proxy(listener.getsockname()[1], told, proxy)


def ask(port: int, request: bytes) -> bytes:
    """Send ``request`` to the proxy, and for a tunnel a GET through it; all the answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(request)
        if request.startswith(b"CONNECT "):
            head = sock.recv(65536)
            if not head.startswith(b"HTTP/1.1 200"):
                return head
            sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        else:
            sock.shutdown(socket.SHUT_WR)  # all of it is sent: an unfinished head ends here
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
        return answer


# {p}: the upstream's port (listed as 127.0.0.1:{p}); {o}: another port, not listed
PAYLOADS = [
    # hosts and ports not listed
    b"CONNECT 127.0.0.1:{o} HTTP/1.1\r\n\r\n",
    b"GET http://127.0.0.1:{o}/ HTTP/1.1\r\n\r\n",
    b"GET http://localhost:{p}/ HTTP/1.1\r\n\r\n",  # the same address, by a name not listed
    b"GET http://localhost.:{p}/ HTTP/1.1\r\n\r\n",
    b"CONNECT localhost:{p} HTTP/1.1\r\n\r\n",
    b"GET http://[::1]:{p}/ HTTP/1.1\r\n\r\n",
    b"CONNECT 127.0.0.2:{p} HTTP/1.1\r\n\r\n",
    b"GET http://127.0.0.1/ HTTP/1.1\r\n\r\n",  # port 80: not the listed one
    b"CONNECT evil.example:443 HTTP/1.1\r\n\r\n",
    # the target read two ways
    b"GET http://127.0.0.1:{p}@evil.example/ HTTP/1.1\r\n\r\n",
    b"GET http://evil.example@127.0.0.1:{p}/ HTTP/1.1\r\n\r\n",
    b"GET http://127.0.0.1%3a{p}/ HTTP/1.1\r\n\r\n",
    b"GET http://127.0.0.1\\:{p}/ HTTP/1.1\r\n\r\n",
    b"GET http://127.0.0.1:{p}\\@evil.example/ HTTP/1.1\r\n\r\n",
    b"GET http://127.0.0.1:0{p}x/ HTTP/1.1\r\n\r\n",
    b"CONNECT 127.0.0.1 HTTP/1.1\r\n\r\n",  # no port
    b"CONNECT 127.0.0.1:{p}/x HTTP/1.1\r\n\r\n",
    b"CONNECT user@127.0.0.1:{p} HTTP/1.1\r\n\r\n",
    b"CONNECT http://127.0.0.1:{p}/ HTTP/1.1\r\n\r\n",
    b"GET https://127.0.0.1:{p}/ HTTP/1.1\r\n\r\n",  # TLS is the client's, by CONNECT
    b"GET /simple/ HTTP/1.1\r\nHost: 127.0.0.1:{p}\r\n\r\n",  # not a proxy request
    b"GET ftp://127.0.0.1:{p}/ HTTP/1.1\r\n\r\n",
    b"GET http:/127.0.0.1:{p}/ HTTP/1.1\r\n\r\n",
    # a head that could be read two ways
    b"GET http://127.0.0.1:{p}/ HTTP/1.1\r\nHost: evil.example\r\n\r\n",
    b"GET http://127.0.0.1:{p}/ HTTP/1.1\r\nHost: 127.0.0.1:{o}\r\n\r\n",
    b"GET http://127.0.0.1:{p}/ HTTP/1.1\r\nHost: 127.0.0.1:{p}\r\nHost: evil.example\r\n\r\n",
    b"CONNECT 127.0.0.1:{p} HTTP/1.1\r\nHost: evil.example:443\r\n\r\n",
    b"GET http://127.0.0.1:{p}/ HTTP/1.1\r\nX: a\r\n b\r\n\r\n",  # a folded line
    b"GET http://127.0.0.1:{p}/ HTTP/1.1\nHost: evil.example\r\n\r\n",  # a bare LF
    b"GET http://127.0.0.1:{p}/ HTTP/1.1\rHost: evil.example\r\n\r\n",  # a bare CR
    b"GET  http://127.0.0.1:{p}/ HTTP/1.1\r\n\r\n",
    b"GET http://127.0.0.1:{p}/ HTTP/2.0\r\n\r\n",
    b"GET http://127.0.0.1:{p}/\xc3\xa9 HTTP/1.1\r\n\r\n",
    b"GET http://127.0.0.1:{p}/ HTTP/1.1\r\nHost : 127.0.0.1:{p}\r\n\r\n",
    b"POST http://127.0.0.1:{p}/ HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nx",
    b"POST http://127.0.0.1:{p}/ HTTP/1.1\r\nContent-Length: 1\r\n"
    b"Transfer-Encoding: chunked\r\n\r\nx",
    b"GET http://127.0.0.1:{p}/ HTTP/1.1\r\nX: " + b"a" * 20_000 + b"\r\n\r\n",
]


def fill(payload: bytes, upstream: Upstream, other: int) -> bytes:
    return payload.replace(b"{p}", str(upstream.port).encode()).replace(b"{o}", str(other).encode())


@pytest.fixture
def other_port() -> Iterator[int]:
    """A port on 127.0.0.1 with a server that is not listed (it must never be reached)."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        yield server.getsockname()[1]


def test_no_payload_reaches_any_server(upstream: Upstream, other_port: int) -> None:
    proxy = start_proxy([f"127.0.0.1:{upstream.port}"])
    try:
        answers = {p: ask(proxy.port, fill(p, upstream, other_port)) for p in PAYLOADS}
    finally:
        proxy.proxy.close()
    through = [p for p, a in answers.items() if b"UPSTREAM" in a]
    assert through == [] and upstream.connections == []
    statuses = {a.split(b"\r\n")[0] for a in answers.values()}
    assert statuses <= {b"HTTP/1.1 400 Bad Request", b"HTTP/1.1 403 Forbidden"}, statuses
    refused = {(d.host, d.port) for d in proxy.told if not d.allowed}
    assert ("localhost", upstream.port) in refused and ("evil.example", 443) in refused
    assert not any(d.allowed for d in proxy.told)


def test_a_listed_host_is_reached_by_both_forms(upstream: Upstream) -> None:
    proxy = start_proxy([f"127.0.0.1:{upstream.port}"])
    try:
        plain = ask(proxy.port, f"GET http://127.0.0.1:{upstream.port}/a?b HTTP/1.1\r\n".encode())
        assert plain == b"" and upstream.connections == []  # an unfinished head: not sent
        plain = ask(
            proxy.port,
            f"GET http://127.0.0.1:{upstream.port}/a?b HTTP/1.1\r\nHost: 127.0.0.1:"
            f"{upstream.port}\r\nProxy-Authorization: x\r\nAccept: */*\r\n\r\n".encode(),
        )
        tunnel = ask(proxy.port, f"CONNECT 127.0.0.1:{upstream.port} HTTP/1.1\r\n\r\n".encode())
    finally:
        proxy.proxy.close()
    assert plain.endswith(b"UPSTREAM") and tunnel.endswith(b"UPSTREAM")
    sent = upstream.connections[0].decode()
    assert sent.startswith(f"GET /a?b HTTP/1.1\r\nHost: 127.0.0.1:{upstream.port}\r\n")
    assert "Proxy-Authorization" not in sent and "Accept: */*" in sent
    assert "Connection: close" in sent
    assert upstream.connections[1] == b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"  # the tunnel's bytes
    assert [(d.how, d.allowed) for d in proxy.told] == [("HTTP", True), ("CONNECT", True)]


def test_a_listed_name_that_resolves_to_loopback_is_refused_unless_private_is_allowed(
    upstream: Upstream,
) -> None:
    request = f"GET http://localhost:{upstream.port}/ HTTP/1.1\r\n\r\n".encode()
    proxy = start_proxy([f"localhost:{upstream.port}"])
    try:
        answer = ask(proxy.port, request)
    finally:
        proxy.proxy.close()
    assert answer.startswith(b"HTTP/1.1 403") and b"loopback address" in answer
    assert upstream.connections == []
    proxy = start_proxy([f"localhost:{upstream.port}"], allow_private=True)
    try:
        assert ask(proxy.port, request).endswith(b"UPSTREAM")
    finally:
        proxy.proxy.close()


def test_each_decision_is_told_once_per_host_port_and_outcome(upstream: Upstream) -> None:
    proxy = start_proxy([f"127.0.0.1:{upstream.port}"])
    try:
        for _ in range(3):
            ask(proxy.port, b"CONNECT evil.example:443 HTTP/1.1\r\n\r\n")
            ask(proxy.port, f"CONNECT 127.0.0.1:{upstream.port} HTTP/1.1\r\n\r\n".encode())
    finally:
        proxy.proxy.close()
    assert [(d.host, d.allowed) for d in proxy.told] == [
        ("evil.example", False),
        ("127.0.0.1", True),
    ]
    assert proxy.told[0].line == (
        "the egress proxy refused CONNECT to evil.example:443: not in [sandbox] network"
    )


def test_closing_the_proxy_cuts_the_tunnels_it_holds() -> None:
    with socket.create_server(("127.0.0.1", 0)) as hold:  # a server that never answers
        held = start_proxy([f"127.0.0.1:{hold.getsockname()[1]}"])
        with socket.create_connection(("127.0.0.1", held.port), timeout=60) as sock:
            sock.sendall(f"CONNECT 127.0.0.1:{hold.getsockname()[1]} HTTP/1.1\r\n\r\n".encode())
            assert sock.recv(100).startswith(b"HTTP/1.1 200")
            held.proxy.close()
            assert sock.recv(100) == b""  # cut, not left hanging


def test_the_request_reader_refuses_what_it_cannot_read_one_way() -> None:
    for payload in PAYLOADS:
        head = fill(payload, Upstream(8080, []), 9090)
        if b"\r\n\r\n" not in head:
            continue
        head = head[: head.index(b"\r\n\r\n") + 4]
        try:
            request = read_request(head)
        except BadRequest:
            continue
        assert not Hosts.parse(["127.0.0.1:8080"]).allowing(request.target), payload
