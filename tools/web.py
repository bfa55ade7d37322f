"""fetch_url: fetch a web page and return it as readable text (Markdown for HTML)."""

from __future__ import annotations

import codecs
import re
import ssl
from urllib.parse import urljoin

import httpx

from .addresses import Refused, destinations
from .base import Runtime, ToolError, builtin_tool, context_of
from .context import ToolContext
from .deadline import Deadline, DeadlineTransport, Stopped
from .decoding import ACCEPT_ENCODING, Undecodable, decoder_for
from .output import cap_output
from .plurals import counted
from .preconditions import url_reachable
from .urls import IPAddress, Target, UnsafeURL, parse_url

TIMEOUT = 30.0  # seconds for the whole fetch: connecting, headers, body, redirects
IO_TIMEOUT = 10.0  # seconds for any one connect or read
MAX_BYTES = 2_000_000  # of the decoded body
MAX_RAW_BYTES = 2_000_000  # of the body as sent (compressed)
MAX_REDIRECTS = 5
USER_AGENT = "Mozilla/5.0 (compatible; fetch_url tool)"
HEADERS = {
    "User-Agent": USER_AGENT,
    "Accept": "text/html,text/plain,*/*;q=0.5",
    "Accept-Encoding": ACCEPT_ENCODING,
}
TEXT_TYPES = ("text/", "application/json", "application/xml", "application/xhtml+xml")
DROP_TAGS = ["script", "style", "noscript", "template", "svg", "iframe", "head"]


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


def target_of(url: str) -> Target:
    """The URL as parse_url reads it, or a ToolError the model can act on."""
    try:
        return parse_url(url)
    except UnsafeURL as exc:
        raise ToolError(f"refusing to fetch {url!r}: {exc}") from exc


def same_site_only(first: str, url: str) -> str | None:
    """The redirect check when the application sets no url_check: a hop on the first URL's
    site (Target.same_site) is followed, a hop to another site is not."""
    try:
        if parse_url(first).same_site(parse_url(url)):
            return None
    except UnsafeURL:
        pass
    return f"{first!r} redirected to {url!r}, on another site: not followed (fetch it by name)"


def _download(
    url: str, context: ToolContext, verify: ssl.SSLContext | bool = True
) -> tuple[Target, httpx.Response, bytes, bool]:
    """GET ``url``, following redirects by hand so that every hop is checked: against the
    host rules (``context.url_check``, else same_site_only), then its addresses, looked up
    once and connected to.

    Connecting, the headers, the body and every redirect share one deadline (TIMEOUT) and
    stop when the person interrupts (``context.cancel``). The body stops at MAX_BYTES, or
    at the deadline; the flag says if it is complete.
    """
    deadline = Deadline(TIMEOUT, context.cancel)
    check = context.url_check or same_site_only
    first = target = target_of(url)
    client = httpx.Client(
        transport=DeadlineTransport(deadline, verify),
        timeout=IO_TIMEOUT,
        headers=HEADERS,
        follow_redirects=False,
        # no proxy from the environment (it would look the host up again, past the
        # address check) and no .netrc credentials sent to whatever host is reached
        trust_env=False,
    )
    with client:
        for _ in range(MAX_REDIRECTS + 1):
            deadline.left()
            if refusal := check(first.url, target.url):
                raise ToolError(refusal)
            try:
                addresses = destinations(target, context.allow_private_urls)
            except Refused as exc:
                raise ToolError(str(exc)) from exc
            response = _send(client, target, addresses, deadline)
            try:
                if response.is_redirect and "location" in response.headers:
                    following = target_of(urljoin(target.url, response.headers["location"]))
                    if following.host != target.host:
                        client.cookies.clear()  # kept by address: not for another host
                    target = following
                    continue
                body, complete = _read_body(target, response)
                return target, response, body, complete
            finally:
                response.close()
    raise ToolError(f"too many redirects (more than {MAX_REDIRECTS})")


def _read_body(target: Target, response: httpx.Response) -> tuple[bytes, bool]:
    """The decoded body, at most MAX_BYTES of it from at most MAX_RAW_BYTES read, and whether
    it is complete. Decoding asks for no more than the room left (tools/decoding.py)."""
    try:
        decoder = decoder_for(response.headers.get("content-encoding", ""))
    except Undecodable as exc:
        raise ToolError(f"{target.url}: {exc}") from exc
    body = bytearray()
    read = 0
    try:
        for chunk in response.iter_raw():
            read += len(chunk)
            body += decoder.decode(chunk, MAX_BYTES + 1 - len(body))
            if len(body) > MAX_BYTES or read > MAX_RAW_BYTES:
                return bytes(body[:MAX_BYTES]), False
            if decoder.finished:
                break
    except Undecodable as exc:
        raise ToolError(f"{target.url}: {exc}") from exc
    except Stopped as exc:
        if exc.interrupted:
            raise
        return bytes(body), False  # out of time: what came so far
    return bytes(body), True


def _send(
    client: httpx.Client, target: Target, addresses: list[IPAddress], deadline: Deadline
) -> httpx.Response:
    """Send the GET to the first of the checked addresses that accepts a connection.

    The request's URL names the address, so the client looks nothing up again; the Host
    header, and for https the TLS server name and the certificate check, name the host.
    """
    named = target.scheme == "https" and target.address is None
    extensions = {"sni_hostname": target.host} if named else {}
    *others, last = addresses  # destinations() never returns none

    def send(address: IPAddress) -> httpx.Response:
        request = client.build_request(
            "GET", target.at(address), headers={"Host": target.authority}, extensions=extensions
        )
        return client.send(request, stream=True)

    for address in others:
        try:
            return send(address)
        except httpx.ConnectError:
            deadline.left()  # the next address, if there is time
    return send(last)


@builtin_tool(precheck=url_reachable)
def fetch_url(url: str, runtime: Runtime) -> str:
    """Fetch a web page or text file over HTTP(S) and return its text.

    HTML pages are turned into Markdown (headings, lists, links and tables kept). Binary
    content such as images or PDFs is refused. Very long pages are cut.

    Args:
        url: The full http:// or https:// URL to fetch.
    """
    context = context_of(runtime)
    try:
        target, response, body, complete = _download(url, context)
    except Stopped as exc:
        raise ToolError(f"fetching {url!r} {exc}") from exc
    except (httpx.HTTPError, httpx.InvalidURL) as exc:
        raise ToolError(f"fetching {url!r} failed: {type(exc).__name__}: {exc}") from exc
    kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind and not kind.startswith(TEXT_TYPES):
        raise ToolError(f"{target.url} is {kind} ({counted(len(body), 'byte')}), not text or HTML")
    encoding = _known_encoding(response.charset_encoding)
    if "html" in kind or (not kind and body.lstrip()[:15].lower().startswith(b"<!doctype html")):
        text = html_to_text(body, encoding)
    else:
        text = body.decode(encoding or "utf-8", errors="replace")
    header = f"URL: {target.url}\nStatus: {response.status_code} {response.reason_phrase}"
    if not complete:
        stopped = f"download stopped after {counted(len(body), 'byte')}"
        header += f"\n({stopped}: the size or time limit was hit)"
    if response.is_error:
        raise ToolError(f"{header}\n\n{cap_output(text, 2000)}")
    return cap_output(f"{header}\n\n{text}", context.max_output_chars)
