"""fetch_url against pages served by the test on 127.0.0.1: text, redirects, the address
check, one DNS lookup per host (no rebinding), and what goes on the wire (Host, TLS name)."""

from __future__ import annotations

import socket
import ssl
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

import httpx
import pytest
import trustme
from agentcli_tools.addresses import Refused, destinations, non_public
from agentcli_tools.context import ToolContext
from agentcli_tools.urls import parse_url
from agentcli_tools.web import MAX_BYTES, _download, fetch_url

from tests.helpers.tooling import local_http

if TYPE_CHECKING:
    from tests.helpers.tooling import ToolEnv

PAGE = b"""<!doctype html><html><head><title>Test page</title>
<style>body { color: red }</style><script>alert('hidden')</script></head>
<body><h1>Hello</h1><p>Some <b>bold</b> text and <a href="/next">a link</a>.</p>
<ul><li>one</li><li>two</li></ul></body></html>"""

ROUTES: dict[str, tuple[int, str, bytes]] = {
    "/page": (200, "text/html; charset=utf-8", PAGE),
    "/plain": (200, "text/plain", "caf\u00e9 plain text".encode()),
    "/image": (200, "image/png", b"\x89PNG\r\n\x1a\n\x00"),
    "/missing": (404, "text/html", b"<h1>Not here</h1>"),
    "/huge": (200, "text/plain", b"x" * (MAX_BYTES + 100_000)),
}


class Handler(BaseHTTPRequestHandler):
    seen: list[tuple[str, str]] = []  # (Host header, path) of every request, in order

    def do_GET(self) -> None:
        Handler.seen.append((self.headers.get("Host", ""), self.path))
        if self.path.startswith("/redirect"):
            self.send_response(302)
            self.send_header("Location", "/page")
            self.end_headers()
            return
        if self.path.startswith("/to-localhost"):  # another host name, the same server
            self.send_response(302)
            self.send_header("Location", f"http://localhost:{self.server.server_address[1]}/page")
            self.end_headers()
            return
        status, kind, body = ROUTES[self.path]
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with local_http(Handler) as httpd:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"


@pytest.fixture
def local(tool_env: ToolEnv, monkeypatch: pytest.MonkeyPatch) -> ToolEnv:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    tool_env.context.allow_private_urls = True
    Handler.seen.clear()
    return tool_env


def test_html_becomes_markdown(local: ToolEnv, server: str) -> None:
    message = local(fetch_url, url=f"{server}/page")
    assert message.status == "success"
    text = message.content
    assert text.startswith(f"URL: {server}/page\nStatus: 200 OK\n\n# Test page")
    assert "# Hello" in text and "**bold**" in text and "[a link](/next)" in text
    assert "* one" in text or "- one" in text
    assert "alert" not in text and "color: red" not in text


def test_plain_text_and_redirects(local: ToolEnv, server: str) -> None:
    assert local(fetch_url, url=f"{server}/plain").content.endswith("caf\u00e9 plain text")
    redirected = local(fetch_url, url=f"{server}/redirect").content
    assert redirected.startswith(f"URL: {server}/page\n")


def test_binary_and_error_pages_are_errors(local: ToolEnv, server: str) -> None:
    image = local(fetch_url, url=f"{server}/image")
    assert image.status == "error" and "image/png" in image.content
    missing = local(fetch_url, url=f"{server}/missing")
    assert missing.status == "error" and "404" in missing.content and "Not here" in missing.content


def test_size_and_output_caps(local: ToolEnv, server: str) -> None:
    local.context.max_output_chars = 5000
    content = local(fetch_url, url=f"{server}/huge").content
    assert len(content) <= 5000
    assert f"download stopped after {MAX_BYTES} bytes" in content
    assert "characters cut" in content


def test_loopback_is_refused_unless_allowed(tool_env: ToolEnv, server: str) -> None:
    message = tool_env(fetch_url, url=f"{server}/page")
    assert message.status == "error"
    assert "127.0.0.1" in message.content and "loopback" in message.content
    assert "Hello" not in message.content


def test_the_client_is_given_the_checked_host_not_the_text(local: ToolEnv, server: str) -> None:
    port = server.rsplit(":", 1)[1]
    for spelling in (f"http://127.1:{port}/plain", f"HTTP://0x7f.0.0.1:{port}/plain#x"):
        message = local(fetch_url, url=spelling)
        assert message.status == "success", message.content
        assert message.content.startswith(f"URL: http://127.0.0.1:{port}/plain\n")
    assert Handler.seen == [(f"127.0.0.1:{port}", "/plain")] * 2


def test_ambiguous_urls_reach_no_server(local: ToolEnv, server: str) -> None:
    port = server.rsplit(":", 1)[1]
    for url in (
        f"http://a.example@127.0.0.1:{port}/page",
        f"http://127.0.0.1:{port}\\@a.example/page",
        f"http://127.0.0.1:{port}/pa ge",
        f"http://%31%32%37.0.0.1:{port}/page",
    ):
        message = local(fetch_url, url=url)
        assert message.status == "error" and "refusing to fetch" in message.content
    assert Handler.seen == []


def test_a_redirect_hop_is_asked_of_url_check(local: ToolEnv, server: str) -> None:
    port = server.rsplit(":", 1)[1]
    asked: list[tuple[str, str]] = []

    def check(first: str, url: str) -> str | None:
        asked.append((first, url))
        return "no: another host" if url.startswith("http://localhost") else None

    local.context.url_check = check
    message = local(fetch_url, url=f"{server}/to-localhost")
    assert message.status == "error" and "no: another host" in message.content
    assert asked == [
        (f"{server}/to-localhost", f"{server}/to-localhost"),
        (f"{server}/to-localhost", f"http://localhost:{port}/page"),
    ]
    assert Handler.seen == [(f"127.0.0.1:{port}", "/to-localhost")]  # /page never asked for


def test_without_url_check_a_redirect_stays_on_the_site(local: ToolEnv, server: str) -> None:
    """An application that sets no url_check gets the fail-closed default: a hop on the
    first URL's site is followed, a hop to another host is not requested."""
    port = server.rsplit(":", 1)[1]
    assert local.context.url_check is None
    message = local(fetch_url, url=f"{server}/to-localhost")
    assert message.status == "error" and "another site: not followed" in message.content
    assert Handler.seen == [(f"127.0.0.1:{port}", "/to-localhost")]
    assert local(fetch_url, url=f"{server}/redirect").content.startswith(f"URL: {server}/page\n")


PRIVATE = [
    "http://10.0.0.1/",
    "http://192.168.1.1/",
    "http://100.64.0.1/",
    "http://169.254.169.254/latest/meta-data/",
    "http://[::1]:8080/",
    "http://[::ffff:127.0.0.1]/",
    "http://[::127.0.0.1]/",  # IPv4-compatible
    "http://[64:ff9b::10.0.0.1]/",  # NAT64
    "http://[64:ff9b:1::1]/",  # local-use NAT64
    "http://[2002:7f00:1::]/",  # 6to4 of 127.0.0.1
    "http://[2002:a9fe:a9fe::]/",  # 6to4 of 169.254.169.254
    "http://[fd00::1]/",
    "http://[fe80::1]/",
    "http://0.0.0.0/",
    "http://0/",
    "http://2130706433/",
    "http://0x7f.1/",
    "http://0177.0.0.1/",
    "http://localhost/",
    "http://224.0.0.1/",
]


@pytest.mark.parametrize("url", PRIVATE)
def test_private_addresses_are_refused(url: str) -> None:
    with pytest.raises(Refused, match="refusing to fetch"):
        destinations(parse_url(url), allow_private=False)


@pytest.mark.parametrize(
    "address", ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c", "64:ff9b::8.8.8.8"]
)
def test_public_addresses_pass(address: str) -> None:
    host = f"[{address}]" if ":" in address else address
    assert destinations(parse_url(f"http://{host}/"), allow_private=False)  # no DNS: numeric
    assert non_public(parse_url(f"http://{host}/").address) is None  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("file:///etc/passwd", "only http:// and https://"),
        ("ftp://example.com/", "only http:// and https://"),
        ("http://", "no host"),
        ("x", "only http:// and https://"),
        ("http://example.com:99999/", "invalid port"),
    ],
)
def test_only_valid_http_and_https(tool_env: ToolEnv, url: str, expected: str) -> None:
    message = tool_env(fetch_url, url=url)
    assert message.status == "error" and expected in message.content


class Wire:
    """A fake resolver and connector: records every lookup and connection, and sends every
    connection to the local server, whatever address was asked for."""

    def __init__(self, answers: dict[str, list[list[str]]], port: int) -> None:
        self.answers = answers
        self.port = port
        self.lookups: list[str] = []
        self.connections: list[tuple[str, int]] = []
        self.real_connect = socket.create_connection
        self.real_getaddrinfo = socket.getaddrinfo

    def getaddrinfo(self, host: str, port: Any, *args: Any, **kwargs: Any) -> list[Any]:
        if host == "127.0.0.1":  # the connector's own call for the local server: no lookup
            return self.real_getaddrinfo(host, port, *args, **kwargs)
        self.lookups.append(host)
        answer = self.answers[host].pop(0)
        return [
            (socket.AF_INET6 if ":" in a else socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port))
            for a in answer
        ]

    def create_connection(self, address: tuple[str, int], *args: Any, **kwargs: Any) -> Any:
        self.connections.append(address)
        return self.real_connect(("127.0.0.1", self.port), *args, **kwargs)


def test_dns_rebinding_gets_no_second_lookup(
    tool_env: ToolEnv, server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The name answers a public address, then 127.0.0.1: the check sees the first answer,
    and the connection goes to that same address, with no second lookup."""
    wire = Wire({"rebind.test": [["93.184.215.14"], ["127.0.0.1"]]}, int(server.split(":")[2]))
    monkeypatch.setattr(socket, "getaddrinfo", wire.getaddrinfo)
    monkeypatch.setattr(socket, "create_connection", wire.create_connection)
    Handler.seen.clear()
    message = tool_env(fetch_url, url="http://rebind.test/plain")
    assert message.status == "success", message.content
    assert message.content.startswith("URL: http://rebind.test/plain\n")
    assert wire.lookups == ["rebind.test"]
    assert wire.connections == [("93.184.215.14", 80)]
    assert Handler.seen == [("rebind.test", "/plain")]  # the Host header names the host


def test_every_answer_is_checked_before_any_connection(
    tool_env: ToolEnv, server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    wire = Wire({"mixed.test": [["93.184.215.14", "127.0.0.1"]]}, int(server.split(":")[2]))
    monkeypatch.setattr(socket, "getaddrinfo", wire.getaddrinfo)
    monkeypatch.setattr(socket, "create_connection", wire.create_connection)
    message = tool_env(fetch_url, url="http://mixed.test/plain")
    assert message.status == "error" and "127.0.0.1, a loopback address" in message.content
    assert wire.lookups == ["mixed.test"] and wire.connections == []


class TLSHandler(Handler):
    pass


@pytest.fixture(scope="module")
def tls_server() -> Iterator[tuple[int, trustme.CA, list[str]]]:
    """An https server on 127.0.0.1 whose certificate names only `pinned.test`; it records
    the TLS server names (SNI) clients send."""
    ca = trustme.CA()
    names: list[str] = []
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("pinned.test").configure_cert(context)
    context.sni_callback = lambda sock, name, ctx: names.append(str(name))  # type: ignore[assignment,misc]

    def tls(httpd: ThreadingHTTPServer) -> None:
        httpd.socket = context.wrap_socket(httpd.socket, server_side=True)

    with local_http(TLSHandler, tls) as httpd:
        yield int(httpd.server_address[1]), ca, names


@pytest.mark.parametrize("name", ["pinned.test", "other.test"])
def test_tls_names_the_host_while_connecting_to_the_checked_address(
    tls_server: tuple[int, trustme.CA, list[str]], name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Connected to the address looked up once, the TLS handshake still sends the host name
    (SNI) and checks the certificate against it: a certificate for another name fails."""
    port, ca, names = tls_server
    wire = Wire({name: [["127.0.0.1"]]}, port)
    monkeypatch.setattr(socket, "getaddrinfo", wire.getaddrinfo)
    monkeypatch.setattr(socket, "create_connection", wire.create_connection)
    names.clear()
    Handler.seen.clear()
    verify = ssl.create_default_context()
    ca.configure_trust(verify)
    context = ToolContext(workspace=None, allow_private_urls=True)  # type: ignore[arg-type]
    url = f"https://{name}:{port}/plain"
    if name == "pinned.test":
        target, response, body, _ = _download(url, context, verify=verify)
        assert response.status_code == 200 and body.endswith(b"plain text")
        assert target.url == f"https://pinned.test:{port}/plain"
        assert Handler.seen == [(f"pinned.test:{port}", "/plain")]
    else:
        with pytest.raises(httpx.ConnectError, match="other.test"):
            _download(url, context, verify=verify)
        assert Handler.seen == []
    assert names == [name] and wire.lookups == [name]
    assert wire.connections == [("127.0.0.1", port)]
