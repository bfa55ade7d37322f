"""Where a fetch may connect: one DNS lookup per host, every answer checked.

fetch_url resolves a host once, here, checks every address it got, and then connects to
one of those very addresses (tools/web.py): a name that answers a public address to the
check and a private one to the connection (DNS rebinding) has no second lookup to win.
"""

from __future__ import annotations

import ipaddress
import socket

from .urls import IPAddress, Target

# IPv6 prefixes that carry an IPv4 address in their last 32 bits
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_COMPATIBLE = ipaddress.IPv6Network("::/96")  # deprecated IPv4-compatible: ::a.b.c.d
_MAPPED = ipaddress.IPv6Network("::ffff:0:0/96")  # ::ffff:a.b.c.d
_TRANSLATED = ipaddress.IPv6Network("::ffff:0:0:0/96")  # IPv4-translated (RFC 2765)
_EMBEDDING = (_NAT64, _COMPATIBLE, _MAPPED, _TRANSLATED)
# the only IPv6 space IANA hands out for hosts on the internet (besides the forms above)
_GLOBAL_UNICAST = ipaddress.IPv6Network("2000::/3")
# special-purpose IPv6 blocks (IANA registry, RFC 3879), named here as the is_global of
# Python 3.11 misses several of them and later versions count parts of 2001::/23 global
_SPECIAL = [
    (ipaddress.IPv6Network(block), kind)
    for block, kind in (
        ("64:ff9b:1::/48", "local-use NAT64"),
        ("100::/64", "discard-only"),
        ("100:0:0:1::/64", "dummy"),
        ("2001::/23", "IETF protocol assignment"),
        ("2001:db8::/32", "documentation"),
        ("3fff::/20", "documentation"),
        ("5f00::/16", "SRv6 segment identifier"),
        ("fc00::/7", "unique local"),
        ("fe80::/10", "link-local"),
        ("fec0::/10", "site-local"),
        ("ff00::/8", "multicast"),
    )
]


class Refused(Exception):
    """A destination that must not be fetched, or a host that does not resolve."""


def resolve(target: Target) -> list[IPAddress]:
    """The host's addresses from one getaddrinfo call (none for an IP address), in order."""
    if (address := target.address) is not None:
        return [address]
    try:
        infos = socket.getaddrinfo(target.host, target.port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise Refused(f"cannot resolve host '{target.host}': {exc}") from exc
    found: list[IPAddress] = []
    for info in infos:
        text = str(info[4][0]).split("%")[0]
        try:
            address = ipaddress.ip_address(text)
        except ValueError as exc:
            raise Refused(f"host '{target.host}' resolved to {text!r}, not an address") from exc
        if address not in found:
            found.append(address)
    if not found:
        raise Refused(f"host '{target.host}' has no address")
    return found


def embedded_ipv4(address: IPAddress) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 address reaches through: mapped, compatible, NAT64,
    6to4 and Teredo forms."""
    if address.version == 4:
        return []
    assert isinstance(address, ipaddress.IPv6Address)
    low = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    found = []
    if address.ipv4_mapped is not None:
        found.append(address.ipv4_mapped)
    if address in _COMPATIBLE or address in _NAT64 or address in _TRANSLATED:
        found.append(low)
    if address.sixtofour is not None:
        found.append(address.sixtofour)
    if address.teredo is not None:
        found.extend(address.teredo)
    return found


def non_public(address: IPAddress) -> str | None:
    """What kind of non-public address this is, or None for a public unicast address.

    An IPv6 address is public only outside the special-purpose blocks, and either in
    global unicast space (2000::/3) or a form that embeds a public IPv4 address."""
    if address.version == 6:
        if kind := next((kind for block, kind in _SPECIAL if address in block), None):
            return kind
    if not address.is_global or address.is_multicast:
        for name in ("loopback", "link_local", "private", "multicast", "unspecified", "reserved"):
            if getattr(address, f"is_{name}"):
                return name.replace("_", "-")
        return "non-public"
    if address.version == 6 and not any(address in net for net in (_GLOBAL_UNICAST, *_EMBEDDING)):
        return "reserved (not global unicast)"
    for inner in embedded_ipv4(address):
        if inner_kind := non_public(inner):
            return f"{inner_kind} (inside the IPv6 address)"
    return None


def destinations(target: Target, allow_private: bool) -> list[IPAddress]:
    """The addresses a fetch of `target` may connect to: all of one lookup's answers, once
    each is checked public (unless private addresses are allowed). Raises Refused."""
    addresses = resolve(target)
    if allow_private:
        return addresses
    for address in addresses:
        if kind := non_public(address):
            raise Refused(private_refusal(target, str(address), kind))
    return addresses


def private_refusal(target: Target, address: str, kind: str) -> str:
    """Why `target` is not fetched: its host is (or resolves to) a non-public `address`."""
    where = f"is {address}" if target.address is not None else f"resolves to {address}"
    return (
        f"refusing to fetch {target.url!r}: host '{target.host}' {where}, a {kind} address; "
        "fetching private, loopback, link-local or reserved addresses is turned off "
        "(the setting [tools] allow_private_urls in the config file is false)"
    )
