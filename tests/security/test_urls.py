"""URLs and hosts: host rules and the private-address check against every spelling of a host.

The policy's host rules and fetch_url read a URL with one function (tools.urls.parse_url),
so each payload here is tried twice: through the policy (unit, one test per payload), and
through the installed command against a server this module starts on 127.0.0.1 (one run
per list, every payload a tool call of it), where "did not get through" means the server
received no request for it.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from agentcli_tools.addresses import Refused, destinations, non_public
from agentcli_tools.urls import UnsafeURL, host_of, normalise_host, parse_url
from hypothesis import given
from hypothesis import strategies as st

from agentcli.policy.approval_policy import Policy
from tests.e2e.conftest import Agent
from tests.helpers.scripted_server import text, tool_calls
from tests.helpers.tooling import local_http

ALLOW = {"tool": "fetch_url", "decision": "allow"}
DENY = {"tool": "fetch_url", "decision": "deny"}

# Each spells a host a deny rule names, in a form the old urlsplit reading did not match.
# (url, the rule's match)
PAYLOADS_DENY = [
    ("http://evil.com./", "evil.com"),
    ("http://EVIL.COM/", "evil.com"),
    ("http://EvIl.CoM./x", "evil.com"),
    ("http://evil\u3002com/", "evil.com"),  # ideographic full stop
    ("http://evil\uff0ecom/", "evil.com"),  # fullwidth full stop
    ("http://evil\uff61com/", "evil.com"),  # halfwidth ideographic full stop
    ("http://\uff45\uff56\uff49\uff4c.\uff43\uff4f\uff4d/", "evil.com"),  # fullwidth letters
    ("HTTPS://evil.com:443/", "evil.com"),
    ("http://evil.com:/", "evil.com"),
    ("http://evil.com#@good.com", "evil.com"),
    ("http://www.EVIL.com./", "*.evil.com"),
    ("http://xn--bcher-kva.de/", "bücher.de"),
    ("http://B\u00dcCHER.de./", "bücher.de"),
    ("http://bücher.de/", "xn--bcher-kva.de"),
    ("http://xn--fa-hia.de/", "faß.de"),  # IDNA 2008 keeps ß, as httpx does
    ("http://FA\u00df.de/", "faß.de"),
    ("http://2130706433/", "127.0.0.1"),
    ("http://0x7f.1/", "127.0.0.1"),
    ("http://127.1/", "127.0.0.1"),
    ("http://0177.0.0.1/", "127.0.0.1"),
    ("http://0x7f000001/", "127.0.0.1"),
    ("http://017700000001/", "127.0.0.1"),
    ("http://127.0.0.1./", "127.0.0.1"),
    ("http://0x7F.0.0.0x1/", "127.0.0.1"),
    ("http://\uff11\uff12\uff17.\uff10.\uff10.\uff11/", "127.0.0.1"),  # fullwidth digits
    ("http://[::ffff:127.0.0.1]/", "127.0.0.1"),
    ("http://[::ffff:7f00:1]/", "127.0.0.1"),
    ("http://[0:0:0:0:0:ffff:127.0.0.1]/", "127.0.0.1"),
    ("http://0251.0376.0251.0376/", "169.254.169.254"),
    ("http://0xa9fea9fe/", "169.254.169.254"),
    ("http://2852039166/", "169.254.169.254"),
    ("http://169.254.43518/", "169.254.169.254"),
    ("http://[0:0:0:0:0:0:0:1]/", "::1"),
    ("http://[::0001]/", "::1"),
    ("http://[2001:DB8:0:0::1]/", "2001:db8::1"),
    ("http://127.1/", "127.1"),  # a rule spelt short is read as the address too
]

# Each looks like a host an allow rule (`*.example.com`) covers, but reaches another host,
# or could be read as reaching one: none may be allowed without a person.
PAYLOADS_ALLOW = [
    "http://a.example.com@evil.com/",
    "http://a.example.com:80@evil.com/",
    "http://a.example.com:@evil.com/",
    "http://evil.com\\@a.example.com/",
    "http://evil.com\\.example.com/",
    "http://evil.com/\\a.example.com/",
    "http://evil.com%2f.example.com/",
    "http://evil.com%23.example.com/",
    "http://evil.com%00.example.com/",
    "http://evil.com\x00.example.com/",
    "http://evil.com\t.example.com/",
    "http://evil.com\n.example.com/",
    "http://evil.com\r\n.example.com/",
    "http://evil.com\u200b.example.com/",  # zero-width space
    "http://evil.com\u00ad.example.com/",  # soft hyphen, dropped by UTS #46
    "http://evil.com\uff0f.example.com/",  # fullwidth solidus: maps to '/'
    "http://evil.com\uff03.example.com/",  # fullwidth number sign: maps to '#'
    "http://evil.com\uff20a.example.com/",  # fullwidth commercial at: maps to '@'
    "http://evil.com#.example.com",
    "http://evil.com?.example.com",
    "http://evil.com/.example.com",
    "http://a.example.com.evil.com/",
    "http://a.example.com..evil.com/",
    "file://a.example.com/etc/passwd",
    "ftp://a.example.com/",
    "gopher://a.example.com:70/",
    "javascript://a.example.com/%0aalert(1)",
    "http:/a.example.com/",
    "http:a.example.com",
    "http:///a.example.com/",
    "//a.example.com/",
    "http://[a.example.com]/",
    "http://a.example.com:99999/",
    "http://a.example.com:80:80/",
    "http://user:pass@a.example.com/",
    "http://p\u0430ypal.example.com.evil.com/",
    "http://xn--pypal-4ve.example.com/",  # Cyrillic а among Latin letters: refused
    "http://\u0430\u0440\u0440\u04cf\u0435.example.com/",  # all-Cyrillic look-alike label
    "http://[fe80::1%25eth0]/",
    "http://a.example.com\u3002/x",  # fine as a host, but the next payload is not
    "http://a.example\u3002com\uff0e.evil/",
]
# the one in PAYLOADS_ALLOW that is a legitimate spelling of a covered host
LEGIT_ALLOW = [
    "https://a.example.com/x",
    "HTTPS://A.Example.COM./x?q=1#frag",
    "https://a.example.com:8443/ü",
    "https://deep.a.example.com/",
    "http://a.example.com\u3002/x",
]

# Addresses fetch_url must not reach with tools.allow_private_urls off (PORT: the local server)
PAYLOADS_PRIVATE = [
    "http://127.0.0.1:PORT/page",
    "http://127.1:PORT/page",
    "http://2130706433:PORT/page",
    "http://0x7f.1:PORT/page",
    "http://0x7f000001:PORT/page",
    "http://0177.0.0.1:PORT/page",
    "http://127.0.0.1.:PORT/page",
    "http://[::1]:PORT/page",
    "http://[::ffff:127.0.0.1]:PORT/page",
    "http://[::ffff:7f00:1]:PORT/page",
    "http://[::127.0.0.1]:PORT/page",  # IPv4-compatible
    "http://[64:ff9b::127.0.0.1]:PORT/page",  # NAT64
    "http://[64:ff9b:1::a00:1]:PORT/page",  # local-use NAT64
    "http://[2002:7f00:1::]:PORT/page",  # 6to4
    "http://[::]:PORT/page",
    "http://0:PORT/page",
    "http://0.0.0.0:PORT/page",
    "http://localhost:PORT/page",
    "http://LOCALHOST.:PORT/page",
    "http://\uff11\uff12\uff17.\uff10.\uff10.\uff11:PORT/page",
    "http://169.254.169.254:PORT/latest/meta-data/",
    "http://10.0.0.1:PORT/page",
    "http://100.64.0.1:PORT/page",
    "http://192.168.0.1:PORT/page",
]


# Spellings of 127.0.0.1 that reach the local server, for a deny rule on "127.0.0.1"
PAYLOADS_LOOPBACK = [
    url
    for url in PAYLOADS_PRIVATE
    if any(part in url for part in ("127", "0177", "0x7f", "2130706433", "\uff11", "7f00"))
    if "::127" not in url and "ff9b" not in url and "2002" not in url
]


# IPv6 addresses no public web server has, that Python 3.11's is_global calls global (or
# that later Pythons do): fetch_url must refuse them with tools.allow_private_urls off
PAYLOADS_SPECIAL_V6 = [
    "fec0::1",  # site-local (deprecated, RFC 3879)
    "fec0:1:2:3::4",
    "feff::1",  # the top of fec0::/10
    "::ffff:0:7f00:1",  # IPv4-translated (RFC 2765) 127.0.0.1
    "::ffff:0:a9fe:a9fe",  # IPv4-translated 169.254.169.254
    "::ffff:0:a00:1",  # IPv4-translated 10.0.0.1
    "::ffff:0:0:0",  # IPv4-translated 0.0.0.0
    "100::1",  # discard-only
    "100::ffff:ffff:ffff:ffff",
    "100:0:0:1::1",  # dummy prefix (RFC 9780)
    "2001:1::1",  # PCP anycast, in 2001::/23 (global in Python 3.12.4+)
    "2001:1::2",  # TURN anycast
    "2001:3::1",  # AMT
    "2001:4:112::1",  # AS112-v6
    "2001:20::1",  # ORCHIDv2
    "2001:30::1",  # drone remote ID
    "2001:1ff::1",  # the top of 2001::/23
    "2001:db8::1",  # documentation
    "2001:db8:ffff::1",
    "3fff::1",  # documentation (RFC 9637)
    "3fff:fff::1",
    "5f00::1",  # SRv6 segment identifiers
    "5f00:ffff::1",
    "4000::1",  # not global unicast space (IANA reserved)
    "::ffff:1:0:0",  # just past IPv4-translated: reserved
    "64:ff9b:1::8.8.8.8",  # local-use NAT64, whatever it embeds
    "2002:a00:1::1",  # 6to4 of 10.0.0.1
]

# Public IPv6 addresses that must stay fetchable
PUBLIC_V6 = [
    "2606:4700:4700::1111",
    "2001:4860:4860::8888",
    "2620:4f:8000::1",  # AS112 direct delegation: global
    "2a00:1450:4001:82b::200e",
    "64:ff9b::8.8.8.8",  # NAT64 of a public address
    "::ffff:0:808:808",  # IPv4-translated 8.8.8.8
    "2002:808:808::1",  # 6to4 of 8.8.8.8
    "3ff0::1",  # below 3fff::/20
    "2001:200::1",  # just past 2001::/23
]


@pytest.mark.parametrize("address", PAYLOADS_SPECIAL_V6)
def test_special_purpose_ipv6_addresses_are_refused(address: str) -> None:
    target = parse_url(f"http://[{address}]/")
    assert target.address is not None and non_public(target.address) is not None
    with pytest.raises(Refused, match="refusing to fetch"):
        destinations(target, allow_private=False)


@pytest.mark.parametrize("address", PUBLIC_V6)
def test_public_ipv6_addresses_are_fetchable(address: str) -> None:
    target = parse_url(f"http://[{address}]/")
    assert destinations(target, allow_private=False) == [ipaddress.ip_address(address)]


SPECIAL_BLOCKS = [
    "fec0::/10",
    "100::/64",
    "2001::/23",
    "2001:db8::/32",
    "3fff::/20",
    "5f00::/16",
    "64:ff9b:1::/48",
    "fc00::/7",
    "fe80::/10",
    "ff00::/8",
    "::/8",
    "4000::/2",
    "8000::/1",
]


@given(st.sampled_from(SPECIAL_BLOCKS), st.integers(0, 2**128 - 1))
def test_every_address_in_a_special_block_is_refused(block: str, bits: int) -> None:
    network = ipaddress.IPv6Network(block)
    address = network[bits % network.num_addresses]
    if address.ipv4_mapped is not None or address in ipaddress.IPv6Network("::ffff:0:0:0/96"):
        return  # these embed an IPv4 address and are checked as it (above)
    if address in ipaddress.IPv6Network("::/96") or address in ipaddress.IPv6Network(
        "64:ff9b::/96"
    ):
        return
    assert non_public(address) is not None, address


@given(st.integers(0, 2**32 - 1))
def test_ipv4_translated_is_read_as_its_ipv4_address(value: int) -> None:
    inner = ipaddress.IPv4Address(value)
    translated = ipaddress.IPv6Address(0xFFFF << 48 | value)  # ::ffff:0:a.b.c.d
    assert (non_public(translated) is None) == (non_public(inner) is None), translated


def decide(url: str, *rules: dict[str, str], auto_approve: bool = False) -> str:
    policy = Policy.build(rules=rules, auto_approve=auto_approve)
    return policy.decide("fetch_url", {"url": url}).decision


@pytest.mark.parametrize(("url", "pattern"), PAYLOADS_DENY)
def test_a_deny_rule_sees_every_spelling_of_its_host(url: str, pattern: str) -> None:
    assert decide(url, {**DENY, "match": pattern}, auto_approve=True) == "deny"
    assert decide(url, {**ALLOW, "match": pattern}) == "allow"  # and allow rules alike


@pytest.mark.parametrize("url", PAYLOADS_ALLOW)
def test_nothing_dressed_as_an_allowed_host_is_allowed(url: str) -> None:
    verdict = decide(url, {**ALLOW, "match": "*.example.com"})
    if url in LEGIT_ALLOW:
        assert verdict == "allow"
    else:
        assert verdict == "ask", host_of(url)


@pytest.mark.parametrize("url", [u for u in PAYLOADS_ALLOW if u not in LEGIT_ALLOW])
def test_an_unreadable_url_matches_no_allow_rule_at_all(url: str) -> None:
    """Even `match = "*"` does not allow a URL fetch_url would refuse: it goes to a person."""
    if host_of(url) is None:
        assert decide(url, {**ALLOW, "match": "*"}) == "ask"


@pytest.mark.parametrize("url", LEGIT_ALLOW)
def test_legitimate_urls_of_an_allowed_host_are_allowed(url: str) -> None:
    assert decide(url, {**ALLOW, "match": "*.example.com"}) == "allow"


@given(st.text(max_size=40))
def test_normalising_twice_changes_nothing(host: str) -> None:
    """A normalised host is its own normal form, and parse_url(target.url) is the target."""
    try:
        once = normalise_host(host)
    except UnsafeURL:
        return
    assert normalise_host(once) == once
    try:
        target = parse_url(f"https://{host}:8080/p?q")
    except UnsafeURL:
        return  # a host that holds '/', '?' or '#' is cut short by the URL around it
    assert parse_url(target.url) == target


@given(st.integers(0, 2**32 - 1), st.sampled_from(["dec", "hex", "oct", "short"]))
def test_every_ipv4_spelling_reads_as_the_dotted_quad(value: int, form: str) -> None:
    quad = ".".join(str((value >> s) & 255) for s in (24, 16, 8, 0))
    spelt = {
        "dec": str(value),
        "hex": hex(value),
        "oct": "0" + oct(value)[2:],
        "short": f"{value >> 24}.{value & 0xFFFFFF}",
    }[form]
    assert host_of(f"http://{spelt}/") == quad
    deny_exact = {**DENY, "match": quad}
    assert decide(f"http://{spelt}/", deny_exact, auto_approve=True) == "deny"


def redirect_refusal(first: str, url: str, *rules: dict[str, str], **flags: Any) -> str | None:
    return Policy.build(rules=rules, **flags).redirect_refusal(first, url)


def test_a_redirect_after_a_persons_approval_stays_on_the_site() -> None:
    first = "http://a.com/x"
    assert redirect_refusal(first, first) is None
    assert redirect_refusal(first, "http://a.com/y") is None
    assert redirect_refusal(first, "https://a.com/y") is None  # the upgrade to https
    for other in ("http://b.com/", "http://a.com:8080/", "http://sub.a.com/", "ftp://a.com/"):
        assert redirect_refusal(first, other), other
    assert redirect_refusal("https://a.com/", "http://a.com/")  # no downgrade
    refusal = redirect_refusal(first, "https://b.com/")
    assert refusal and "'b.com'" in refusal and "approval.rules" in refusal


def test_a_redirect_needs_a_rule_deny_rules_see_every_hop() -> None:
    allow_b = {**ALLOW, "match": "b.com"}
    assert redirect_refusal("http://a.com/", "http://b.com./", allow_b) is None
    deny_b = {**DENY, "match": "*.b.com"}
    refusal = redirect_refusal("http://a.com/", "http://x.B.com/", deny_b, auto_approve=True)
    assert refusal and "denied by rule" in refusal
    assert redirect_refusal("http://x.b.com/", "http://x.b.com/y", deny_b)  # even the same site
    assert redirect_refusal("http://a.com/", "http://c.com/", auto_approve=True) is None


# --- through the installed command ------------------------------------------------------


class Handler(BaseHTTPRequestHandler):
    seen: list[tuple[str, str]] = []

    def do_GET(self) -> None:
        Handler.seen.append((self.headers.get("Host", ""), self.path))
        port = self.server.server_address[1]
        if self.path in ("/to-localhost", "/to-same"):
            target = f"http://localhost:{port}/page" if self.path == "/to-localhost" else "/page"
            self.send_response(302)
            self.send_header("Location", target)
            self.end_headers()
            return
        body = b"<html><head><title>Local page</title></head><body>Hello</body></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def site() -> Iterator[int]:
    """A web server on 127.0.0.1: its port; Handler.seen lists what it was asked."""
    Handler.seen.clear()
    with local_http(Handler) as httpd:
        yield int(httpd.server_address[1])


def configure(agent: Agent, *rules: dict[str, str], private: bool) -> None:
    path = Path(agent.env["XDG_CONFIG_HOME"]) / "agentcli" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [f"[tools]\nallow_private_urls = {str(private).lower()}\n"]
    for rule in rules:
        lines.append(
            "[[approval.rules]]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in rule.items())
        )
    path.write_text("\n".join(lines))


def fetch_all(agent: Agent, urls: list[str], *flags: str) -> tuple[Any, dict[str, str]]:
    """One run in which the model asks to fetch every URL: the report and each call's result."""
    agent.server.push(tool_calls(*(("fetch_url", {"url": url}) for url in urls)), text("done"))
    result = agent.run("run", "fetch them", *flags, "-o", "json", timeout=120)
    assert result.returncode in (0, 3), result.stderr
    results: dict[str, str] = {}
    if len(agent.server.requests) > 1:
        messages = agent.server.requests[1]["messages"]
        results = {m["tool_call_id"]: m["content"] for m in messages if m["role"] == "tool"}
    return json.loads(result.stdout), results


def test_e2e_deny_rule_on_an_address_holds_for_every_spelling(agent: Agent, site: int) -> None:
    configure(agent, {**DENY, "match": "127.0.0.1"}, private=True)
    spellings = [url.replace("PORT", str(site)) for url in PAYLOADS_LOOPBACK]
    legit = f"http://localhost:{site}/page"
    _, results = fetch_all(agent, [*spellings, legit], "--auto-approve")
    for number, url in enumerate(spellings, 1):
        content = results[f"call_{number}"]
        assert "denied by rule 1" in content, (url, content)
    assert "Hello" in results[f"call_{len(spellings) + 1}"]  # the server works, and is reached
    assert Handler.seen == [(f"localhost:{site}", "/page")]


def test_e2e_nothing_dressed_as_an_allowed_host_runs(agent: Agent, site: int) -> None:
    configure(agent, {**ALLOW, "match": "a.example.com"}, private=True)
    urls = [
        f"http://a.example.com@127.0.0.1:{site}/page",
        f"http://a.example.com:{site}@127.0.0.1:{site}/page",
        f"http://127.0.0.1:{site}\\@a.example.com/page",
        f"http://127.0.0.1:{site}#@a.example.com",
        f"http://127.0.0.1:{site}/?.a.example.com",
        f"http://127.0.0.1:{site}\t.a.example.com/page",
        f"http://127.0.0.1:{site}%2f.a.example.com/page",
    ]
    report, _ = fetch_all(agent, urls)
    assert report["status"] == "awaiting_approval", report
    # the URLs fetch_url cannot read one way go back to the model unasked (its precheck);
    # the two that read as 127.0.0.1 are asked, as no rule allows that host
    readable = [
        f"http://127.0.0.1:{site}#@a.example.com",
        f"http://127.0.0.1:{site}/?.a.example.com",
    ]
    assert sorted(p["args"]["url"] for p in report["pending"]) == sorted(readable)
    assert Handler.seen == []


def test_e2e_ambiguous_urls_are_refused_even_when_approved(agent: Agent, site: int) -> None:
    configure(agent, private=True)
    urls = [
        f"http://a.example.com@127.0.0.1:{site}/page",
        f"http://127.0.0.1:{site}\\@a.example.com/page",
        f"http://127.0.0.1:{site}\\/page",
        f"http://%31%32%37.0.0.1:{site}/page",
        f"http://127.0.0.1:{site}/pa\tge",
        f"http://127.0.0.1:{site}\u200b/page",
        f"http:127.0.0.1:{site}/page",
        f"http:/127.0.0.1:{site}/page",
    ]
    _, results = fetch_all(agent, [*urls, f"http://127.1:{site}/page"], "--auto-approve")
    for number, url in enumerate(urls, 1):
        assert "refusing to fetch" in results[f"call_{number}"], url
    assert "Hello" in results[f"call_{len(urls) + 1}"]
    assert Handler.seen == [(f"127.0.0.1:{site}", "/page")]


def test_e2e_private_addresses_are_refused_before_any_connection(agent: Agent, site: int) -> None:
    configure(agent, private=False)
    urls = [url.replace("PORT", str(site)) for url in PAYLOADS_PRIVATE]
    _, results = fetch_all(agent, urls, "--auto-approve")
    for number, url in enumerate(urls, 1):
        content = results[f"call_{number}"]
        assert "refusing to fetch" in content or "cannot resolve" in content, (url, content)
        assert "Hello" not in content
    assert Handler.seen == []


def test_e2e_a_redirect_to_a_host_no_rule_allows_is_not_followed(agent: Agent, site: int) -> None:
    configure(agent, {**ALLOW, "match": "127.0.0.1"}, private=True)
    urls = [f"http://127.0.0.1:{site}/to-localhost", f"http://127.0.0.1:{site}/to-same"]
    _, results = fetch_all(agent, urls)
    stopped = results["call_1"]
    assert "'localhost'" in stopped and "approval.rules" in stopped and "Hello" not in stopped
    assert "Hello" in results["call_2"]  # the same host: followed
    assert sorted(Handler.seen) == sorted(
        [(f"127.0.0.1:{site}", "/to-localhost"), (f"127.0.0.1:{site}", "/to-same")]
        + [(f"127.0.0.1:{site}", "/page")]
    )


def test_e2e_a_deny_rule_stops_a_redirect_whatever_allowed_the_first_url(
    agent: Agent, site: int
) -> None:
    configure(agent, {**DENY, "match": "LOCALHOST."}, private=True)
    _, results = fetch_all(agent, [f"http://127.0.0.1:{site}/to-localhost"], "--auto-approve")
    assert "denied by rule 1" in results["call_1"] and "Hello" not in results["call_1"]
    assert Handler.seen == [(f"127.0.0.1:{site}", "/to-localhost")]


def test_e2e_a_persons_approval_does_not_cover_another_host(agent: Agent, site: int) -> None:
    configure(agent, private=True)
    agent.server.push(
        tool_calls(("fetch_url", {"url": f"http://127.0.0.1:{site}/to-localhost"})),
        text("done"),
    )
    parked = agent.run("run", "fetch it", "-o", "json")
    assert parked.returncode == 3, parked.stderr
    assert Handler.seen == []
    thread = json.loads(parked.stdout)["thread_id"]
    approved = agent.run("review", thread, "--approve", "all", "-o", "json")
    assert approved.returncode == 0, approved.stderr
    messages = agent.server.requests[1]["messages"]
    result = next(m["content"] for m in messages if m["role"] == "tool")
    assert "'localhost'" in result and "Hello" not in result
    assert Handler.seen == [(f"127.0.0.1:{site}", "/to-localhost")]


def test_the_server_context_checks_redirects_whatever_the_client_sends(tmp_path: Path) -> None:
    from agentcli.config import Settings
    from agentcli.server.graph import context_schema

    settings = Settings(rules=[{**DENY, "match": "b.com"}])
    context = context_schema(settings, tmp_path)(url_check=None)
    assert context.url_check("http://a.com/", "http://b.com/")
    assert context.url_check("http://a.com/", "http://a.com/x") is None
