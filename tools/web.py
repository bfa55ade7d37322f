"""fetch_url: fetch a web page and return it as readable text (Markdown for HTML)."""

from __future__ import annotations

import codecs
import ipaddress
import re
import socket
import time
from urllib.parse import urljoin, urlsplit

import httpx

from tools.base import Runtime, ToolError, builtin_tool, context_of
from tools.output import cap_output

TIMEOUT = 30.0  # seconds for the whole fetch, redirects included
IO_TIMEOUT = 10.0  # seconds for any one connect or read
MAX_BYTES = 2_000_000
MAX_REDIRECTS = 5
USER_AGENT = "Mozilla/5.0 (compatible; fetch_url tool)"
TEXT_TYPES = ("text/", "application/json", "application/xml", "application/xhtml+xml")
DROP_TAGS = ["script", "style", "noscript", "template", "svg", "iframe", "head"]


def check_destination(url: str, allow_private: bool) -> None:
    """Refuse URLs that are not http(s), and hosts that resolve to a non-public address."""
    try:
        parts = urlsplit(url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as exc:
        raise ToolError(f"invalid URL {url!r}: {exc}") from exc
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ToolError(f"only http:// and https:// URLs with a host can be fetched, not {url!r}")
    if allow_private:
        return
    try:
        infos = socket.getaddrinfo(parts.hostname, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise ToolError(f"cannot resolve host '{parts.hostname}': {exc}") from exc
    for info in infos:
        address = ipaddress.ip_address(str(info[4][0]).split("%")[0])
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
            address = address.ipv4_mapped
        if not address.is_global or address.is_multicast:
            raise ToolError(
                f"refusing to fetch {url!r}: host '{parts.hostname}' resolves to {address}, "
                f"a {_kind(address)} address; the application does not allow fetching "
                "private, loopback, link-local or reserved addresses"
            )


def _kind(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str:
    for kind in ("loopback", "link_local", "private", "multicast", "unspecified", "reserved"):
        if getattr(address, f"is_{kind}"):
            return kind.replace("_", "-")
    return "non-public"


def html_to_text(html: bytes | str, encoding: str | None) -> str:
    """Readable Markdown from HTML: scripts and styles dropped, links and headings kept."""
    from bs4 import BeautifulSoup
    from markdownify import MarkdownConverter

    soup = BeautifulSoup(html, "html.parser", from_encoding=encoding)
    title = soup.title.get_text(strip=True) if soup.title else ""
    for tag in soup(DROP_TAGS):
        tag.decompose()
    text = MarkdownConverter(heading_style="ATX", strip=["img"]).convert_soup(soup)
    text = re.sub(r"\n\s*\n\s*\n+", "\n\n", text).strip()
    return f"# {title}\n\n{text}" if title else text


def _known_encoding(name: str | None) -> str | None:
    try:
        return codecs.lookup(name).name if name else None
    except LookupError:
        return None


def _download(
    client: httpx.Client, url: str, allow_private: bool
) -> tuple[httpx.Response, bytes, bool]:
    """GET ``url``, following redirects by hand so that every hop is checked.

    The body stops at MAX_BYTES or at the overall deadline; the flag says if it is complete.
    """
    deadline = time.monotonic() + TIMEOUT
    for _ in range(MAX_REDIRECTS + 1):
        if time.monotonic() > deadline:
            raise ToolError(f"fetching {url!r} took longer than {TIMEOUT:g}s")
        check_destination(url, allow_private)
        with client.stream("GET", url) as response:
            if response.is_redirect and "location" in response.headers:
                url = urljoin(url, response.headers["location"])
                continue
            body = bytearray()
            for chunk in response.iter_bytes():
                body += chunk
                if len(body) >= MAX_BYTES or time.monotonic() > deadline:
                    return response, bytes(body[:MAX_BYTES]), False
            return response, bytes(body), True
    raise ToolError(f"too many redirects (more than {MAX_REDIRECTS})")


@builtin_tool
def fetch_url(url: str, runtime: Runtime) -> str:
    """Fetch a web page or text file over HTTP(S) and return its text.

    HTML pages are turned into Markdown (headings, lists, links and tables kept). Binary
    content such as images or PDFs is refused. Very long pages are cut.

    Args:
        url: The full http:// or https:// URL to fetch.
    """
    context = context_of(runtime)
    headers = {"User-Agent": USER_AGENT, "Accept": "text/html,text/plain,*/*;q=0.5"}
    try:
        with httpx.Client(timeout=IO_TIMEOUT, headers=headers, follow_redirects=False) as client:
            response, body, complete = _download(client, url, context.allow_private_urls)
    except (httpx.HTTPError, httpx.InvalidURL) as exc:
        raise ToolError(f"fetching {url!r} failed: {type(exc).__name__}: {exc}") from exc
    kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind and not kind.startswith(TEXT_TYPES):
        raise ToolError(f"{response.url} is {kind} ({len(body)} bytes), not text or HTML")
    encoding = _known_encoding(response.charset_encoding)
    if "html" in kind or (not kind and body.lstrip()[:15].lower().startswith(b"<!doctype html")):
        text = html_to_text(body, encoding)
    else:
        text = body.decode(encoding or "utf-8", errors="replace")
    header = f"URL: {response.url}\nStatus: {response.status_code} {response.reason_phrase}"
    if not complete:
        header += f"\n(download stopped after {len(body)} bytes: the size or time limit was hit)"
    if response.is_error:
        raise ToolError(f"{header}\n\n{cap_output(text, 2000)}")
    return cap_output(f"{header}\n\n{text}", context.max_output_chars)
