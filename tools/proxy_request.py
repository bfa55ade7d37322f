"""A request made to the egress proxy, read strictly: the one place its bytes are parsed.

Two forms are accepted (RFC 9112): ``CONNECT host:port`` (a tunnel, for https) and a
request whose target is a whole ``http://`` URL (absolute form). The target is read by
tools/urls.py (parse_url, parse_authority), as fetch_url reads URLs, so the proxy checks the
host and port it will connect to, normalised (IP forms, IDNA, case, one trailing dot), and
refuses what two parsers could read differently: userinfo, percent-encoding in the host,
backslashes, whitespace.

The head itself must be plain: printable ASCII, every line ended by CRLF (no bare CR or LF,
no folded header line), one request line ``METHOD TARGET HTTP/1.x``, header names that are
tokens, at most one Host header and it names the same host and port as the target, at most
one Content-Length, not with Transfer-Encoding. Anything else is a BadRequest.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .urls import Target, UnsafeURL, parse_authority, parse_url

HEAD_LIMIT = 16_384  # bytes of a request's head
_TOKEN = r"[!#$%&'*+.^_`|~0-9A-Za-z-]+"
_REQUEST_LINE = re.compile(rf"({_TOKEN}) ([\x21-\x7e]+) HTTP/1\.[01]")
_HEADER = re.compile(rf"({_TOKEN}):[ \t]*([\x20-\x7e\t]*?)[ \t]*")
# headers for the proxy itself, or for one connection: never passed on
_HOP_BY_HOP = {"connection", "keep-alive", "proxy-connection", "proxy-authorization", "te"}
_HOP_BY_HOP |= {"trailer", "upgrade", "host"}


class BadRequest(ValueError):
    """A request the proxy does not read: why, for the 400 answer."""


@dataclass(frozen=True)
class ProxyRequest:
    method: str
    target: Target  # the host and port to connect to, normalised
    headers: tuple[tuple[str, str], ...]

    @property
    def tunnel(self) -> bool:
        return self.method == "CONNECT"

    def forwarded(self) -> bytes:
        """The head to send the server for an absolute-form request: origin form, the Host
        the proxy checked, no proxy or connection headers, and the connection closed after
        the answer (so each request on a connection to the proxy is checked anew)."""
        lines = [f"{self.method} {self.target.rest} HTTP/1.1", f"Host: {self.target.authority}"]
        lines += [f"{name}: {value}" for name, value in self.headers]
        lines.append("Connection: close")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("ascii")


def read_request(head: bytes) -> ProxyRequest:
    """The request whose head (up to and including the blank line) is ``head``."""
    if len(head) > HEAD_LIMIT:
        raise BadRequest(f"the request's head is longer than {HEAD_LIMIT} bytes")
    if not head.endswith(b"\r\n\r\n"):
        raise BadRequest("the request's head does not end with an empty line")
    try:
        text = head[:-4].decode("ascii")
    except UnicodeDecodeError:
        raise BadRequest("the request's head is not ASCII") from None
    first, *rest = text.split("\r\n")
    if any(c in line for line in (first, *rest) for c in "\r\n"):
        raise BadRequest("a line of the request ends in a bare CR or LF")
    line = _REQUEST_LINE.fullmatch(first)
    if not line:
        raise BadRequest(f"not a request line: {first[:200]!r}")
    method, raw_target = line.groups()
    headers = []
    for field in rest:
        found = _HEADER.fullmatch(field)
        if not found:
            raise BadRequest(f"not a header line: {field[:200]!r}")
        headers.append((found[1], found[2]))
    target = _target(method, raw_target)
    named = [value for name, value in headers if name.lower() == "host"]
    if len(named) > 1:
        raise BadRequest("more than one Host header")
    if named:
        _same_host(named[0], target)
    lengths = [v for n, v in headers if n.lower() == "content-length"]
    chunked = any(n.lower() == "transfer-encoding" for n, _ in headers)
    if len(lengths) > 1 or (lengths and chunked):
        raise BadRequest("more than one body length (Content-Length, Transfer-Encoding)")
    kept = tuple((n, v) for n, v in headers if n.lower() not in _HOP_BY_HOP)
    return ProxyRequest(method, target, kept)


def _target(method: str, raw: str) -> Target:
    try:
        if method == "CONNECT":
            return parse_authority(raw, "https", port_required=True)
        if not raw.lower().startswith("http://"):
            raise BadRequest(
                "the proxy takes CONNECT host:port, or a request for a whole http:// URL"
            )
        return parse_url(raw)
    except UnsafeURL as exc:
        raise BadRequest(f"{raw[:200]!r}: {exc}") from None


def _same_host(value: str, target: Target) -> None:
    """A Host header must name the target's host and port (its scheme's port if none)."""
    try:
        named = parse_authority(value, target.scheme)
    except UnsafeURL as exc:
        raise BadRequest(f"Host {value[:200]!r}: {exc}") from None
    if (named.host, named.port) != (target.host, target.port):
        raise BadRequest(f"Host {value[:200]!r} is not the request's {target.authority!r}")
