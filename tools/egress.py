"""The hosts a confined command may reach through the egress proxy (``[sandbox] network``).

Each entry is read by tools/urls.py, the one parser fetch_url and the policy use:

- ``pypi.org``: that host, on ports 80 and 443;
- ``*.npmjs.org``: every host that ends in ``.npmjs.org`` (not ``npmjs.org`` itself), on
  ports 80 and 443; ``*`` is allowed only as a whole first label;
- ``host:port``: that host on that port only (``127.0.0.1:8080``, ``pypi.org:8443``).

An entry that is an IP address (``127.0.0.1:8080``, ``[::1]:3000``) names that address
itself: the proxy connects to it even where it is loopback or private. A name is resolved
by the proxy, once, and its addresses must be public, unless ``[tools] allow_private_urls``
is true (tools/addresses.py, as for fetch_url): a listed name that resolves to 127.0.0.1 is
no way into the machine's own services.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .urls import Target, UnsafeURL, parse_authority

DEFAULT_PORTS = (80, 443)
WILDCARD = "*."


@dataclass(frozen=True)
class Entry:
    """One allowed destination: a host (or, with ``suffix``, the hosts under it) and ports."""

    host: str  # normalised, as parse_url spells hosts
    ports: tuple[int, ...]
    suffix: bool = False  # "*.host": any host under it, not itself

    def matches(self, target: Target) -> bool:
        if target.port not in self.ports:
            return False
        if self.suffix:
            return target.host.endswith("." + self.host)
        return target.host == self.host


def parse_entry(text: str) -> Entry:
    """One ``[sandbox] network`` entry, or UnsafeURL saying what is wrong with it."""
    if not isinstance(text, str):
        raise UnsafeURL("not a string")
    if not text:
        raise UnsafeURL("a host is empty")
    suffix = text.startswith(WILDCARD)
    rest = text[len(WILDCARD) :] if suffix else text
    if "*" in rest:
        raise UnsafeURL("a wildcard goes only first, as a whole label: '*.example.org'")
    target = parse_authority(rest, "http")
    if suffix and (target.address is not None or "." not in target.host):
        raise UnsafeURL("a wildcard needs a domain under it: '*.example.org'")
    given = ":" in rest.rsplit("]", 1)[-1]
    return Entry(target.host, (target.port,) if given else DEFAULT_PORTS, suffix)


def entry_problem(text: object) -> str | None:
    """What is wrong with a ``[sandbox] network`` entry (for the config's checks), or None."""
    try:
        parse_entry(text)  # type: ignore[arg-type]
    except UnsafeURL as exc:
        return str(exc)
    return None


@dataclass(frozen=True)
class Hosts:
    """The entries of ``[sandbox] network``, in order."""

    entries: tuple[Entry, ...]

    @classmethod
    def parse(cls, texts: Iterable[str]) -> Hosts:
        return cls(tuple(parse_entry(text) for text in texts))

    def allowing(self, target: Target) -> Entry | None:
        """The first entry that allows ``target`` (host and port), or None."""
        return next((entry for entry in self.entries if entry.matches(target)), None)

    def names_address(self, target: Target) -> bool:
        """Whether an entry allowing ``target`` is the very IP address it connects to: the
        person named it, loopback or private as it may be."""
        entry = self.allowing(target)
        return entry is not None and target.address is not None and entry.host == target.host
