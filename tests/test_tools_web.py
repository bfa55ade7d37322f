"""fetch_url against a page served by the test on 127.0.0.1; private-address refusal."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING

import pytest

from tools.base import ToolError
from tools.web import MAX_BYTES, check_destination, fetch_url

if TYPE_CHECKING:
    from tests.tooling import ToolEnv


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
    def do_GET(self) -> None:
        if self.path.startswith("/redirect"):
            self.send_response(302)
            self.send_header("Location", "/page")
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
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def local(tool_env: ToolEnv, monkeypatch: pytest.MonkeyPatch) -> ToolEnv:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    tool_env.context.allow_private_urls = True
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


@pytest.mark.parametrize(
    "url",
    [
        "http://10.0.0.1/",
        "http://192.168.1.1/",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::1]:8080/",
        "http://[::ffff:127.0.0.1]/",
        "http://0.0.0.0/",
        "http://localhost/",
    ],
)
def test_private_addresses_are_refused(url: str) -> None:
    with pytest.raises(ToolError, match="refusing to fetch"):
        check_destination(url, allow_private=False)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("file:///etc/passwd", "only http:// and https://"),
        ("ftp://example.com/", "only http:// and https://"),
        ("http://", "only http:// and https://"),
        ("x", "only http:// and https://"),
        ("http://example.com:99999/", "invalid URL"),
    ],
)
def test_only_valid_http_and_https(tool_env: ToolEnv, url: str, expected: str) -> None:
    message = tool_env(fetch_url, url=url)
    assert message.status == "error" and expected in message.content


def test_public_address_passes_the_check() -> None:
    check_destination("http://93.184.215.14/", allow_private=False)  # numeric: no DNS needed
