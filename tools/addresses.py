"""Where a fetch may connect: one DNS lookup per host, every answer checked.

fetch_url resolves a host once, here, checks every address it got, and then connects to
one of those very addresses (tools/web.py): a name that answers a public address to the
check and a private one to the connection (DNS rebinding) has no second lookup to win.
"""

from __future__ import annotations

import ipaddress
import socket

from tools.urls import IPAddress, Target

# IPv6 prefixes that carry an IPv4 address in their last 32 bits, or are for local use
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_NAT64_LOCAL = ipaddress.IPv6Network("64:ff9b:1::/48")
_COMPATIBLE = ipaddress.IPv6Network("::/96")  # deprecated IPv4-compatible: ::a.b.c.d


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
    if address in _COMPATIBLE or address in _NAT64:
        found.append(low)
    if address.sixtofour is not None:
        found.append(address.sixtofour)
    if address.teredo is not None:
        found.extend(address.teredo)
    return found


def non_public(address: IPAddress) -> str | None:
    """What kind of non-public address this is, or None for a public unicast address."""
    if address.version == 6 and address in _NAT64_LOCAL:
        return "local-use NAT64"
    if not address.is_global or address.is_multicast:
        for name in ("loopback", "link_local", "private", "multicast", "unspecified", "reserved"):
            if getattr(address, f"is_{name}"):
                return name.replace("_", "-")
        return "non-public"
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
            raise Refused(
                f"refusing to fetch {target.url!r}: host '{target.host}' resolves to "
                f"{address}, a {kind} address; the application does not allow fetching "
                "private, loopback, link-local or reserved addresses "
                "(setting tools.allow_private_urls)"
            )
    return addresses
