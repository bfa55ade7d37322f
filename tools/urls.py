"""One reading of a URL: the host the HTTP client connects to, for the policy and fetch_url alike.

`parse_url` is the only place a URL's host is read. The approval policy globs its host
rules on `Target.host`, and fetch_url connects to that same host (it hands the client the
rebuilt `Target.url`, never the text it was given), so a rule cannot see one host while
the fetch reaches another. A URL that two parsers could read differently is refused
rather than guessed at: userinfo (`a.com@b.com`), backslashes, whitespace and control
characters, percent-encoded bytes in the host, a missing host, any scheme but http(s).

Hosts are normalised the way a browser's URL parser does (UTS #46, WHATWG): lower case,
one trailing dot dropped, Unicode names mapped and written as IDNA 2008 punycode (`ß` stays
`ß`, so `faß.de` is `xn--fa-hia.de`, not `fass.de`), any IPv4 form `inet_aton` takes
(`2130706433`, `0x7f.1`, `0177.0.0.1`) as a dotted quad, IPv6 compressed, an IPv4-mapped
IPv6 address (`[::ffff:127.0.0.1]`) as the IPv4 address it reaches.

Imported by the policy (and so by quick commands): the standard library only, and the
`idna` package only for hosts that need it.
"""

from __future__ import annotations

import ipaddress
import re
import unicodedata
from dataclasses import dataclass

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
DEFAULT_PORTS = {"http": 80, "https": 443}
MAX_URL = 8192
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):")
_PORT = re.compile(r"[0-9]{1,5}")
_LABEL = re.compile(r"[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?")
_NUMBER = re.compile(r"(?:0[xX][0-9a-fA-F]*|[0-9]+)")
_GLOB = set("*?[]")
# scripts that are written together (Japanese, Chinese, Korean, with Latin): not confusable
_CJK = {"CJK", "HIRAGANA", "KATAKANA", "KATAKANA-HIRAGANA", "HANGUL", "BOPOMOFO", "IDEOGRAPHIC"}
# Cyrillic letters drawn like Latin ones: a label made only of them imitates a Latin name
_CYRILLIC_LATIN = set("\u0430\u0441\u0435\u04bb\u0456\u0458\u043e\u0440\u0455\u0443\u0445\u0501")
_CYRILLIC_LATIN |= set("\u051b\u051d\u04cf\u0475\u0491")


class UnsafeURL(ValueError):
    """A URL fetch_url refuses: not http(s), or not read the same way by every parser."""


@dataclass(frozen=True)
class Target:
    """A URL as fetch_url will request it: the normalised host, the port, the rest as given."""

    scheme: str  # "http" or "https"
    host: str  # normalised: what rules match and what is connected to
    port: int
    rest: str  # path and query ("/" when empty); the fragment is dropped

    @property
    def address(self) -> IPAddress | None:
        """The host when it is an IP address, else None (a name to resolve)."""
        try:
            return ipaddress.ip_address(self.host)
        except ValueError:
            return None

    @property
    def authority(self) -> str:
        """The Host header: host, and the port when it is not the scheme's default."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if self.port == DEFAULT_PORTS[self.scheme] else f"{host}:{self.port}"

    @property
    def url(self) -> str:
        return f"{self.scheme}://{self.authority}{self.rest}"

    def at(self, address: IPAddress) -> str:
        """This URL with the host replaced by an address it resolved to."""
        host = f"[{address.compressed}]" if address.version == 6 else str(address)
        port = "" if self.port == DEFAULT_PORTS[self.scheme] else f":{self.port}"
        return f"{self.scheme}://{host}{port}{self.rest}"

    def same_site(self, other: Target) -> bool:
        """Same host, scheme and port, or the same host moved from http to https."""
        if self.host != other.host:
            return False
        if (self.scheme, self.port) == (other.scheme, other.port):
            return True
        return (self.scheme, self.port, other.scheme, other.port) == ("http", 80, "https", 443)


def parse_url(url: str) -> Target:
    """Read an http(s) URL the one way fetch_url will use it, or raise UnsafeURL."""
    if not isinstance(url, str) or not url:
        raise UnsafeURL("the URL is empty")
    if len(url) > MAX_URL:
        raise UnsafeURL(f"the URL is longer than {MAX_URL} characters")
    if bad := next((c for c in url if _invisible(c) or c == "\\"), None):
        raise UnsafeURL(f"the URL holds {bad!r}: whitespace, control characters and backslashes")
    scheme_match = _SCHEME.match(url)
    scheme = scheme_match.group(1).lower() if scheme_match else ""
    if scheme not in DEFAULT_PORTS:
        raise UnsafeURL("only http:// and https:// URLs can be fetched")
    after = url[scheme_match.end() :] if scheme_match else ""
    if not after.startswith("//"):
        raise UnsafeURL("the URL has no host (it must start with http:// or https://)")
    after = after[2:]
    end = min((i for i in (after.find(c) for c in "/?#") if i >= 0), default=len(after))
    authority, rest = after[:end], after[end:].split("#", 1)[0]
    if "@" in authority:
        raise UnsafeURL("user names and passwords in URLs (user@host) are not accepted")
    if "%" in authority:
        raise UnsafeURL("percent-encoded characters in the host are not accepted")
    host, port_text = _split_authority(authority)
    port = DEFAULT_PORTS[scheme]
    if port_text:
        if not _PORT.fullmatch(port_text) or not 0 < int(port_text) < 65536:
            raise UnsafeURL(f"invalid port {port_text!r}")
        port = int(port_text)
    if not rest.startswith("/"):
        rest = "/" + rest
    return Target(scheme, normalise_host(host), port, rest)


def parse_authority(text: str, scheme: str, port_required: bool = False) -> Target:
    """``host[:port]`` (a CONNECT request's target, a Host header, a ``[sandbox] network``
    entry) read by parse_url as the authority of a ``scheme`` URL, or UnsafeURL: nothing
    but the authority (no path, query or fragment), and with ``port_required``, a port."""
    if not isinstance(text, str) or any(c in text for c in "/?#"):
        raise UnsafeURL(f"{text!r} is not a host and port")
    target = parse_url(f"{scheme}://{text}/")
    if port_required and not _split_authority(text)[1]:
        raise UnsafeURL(f"{text!r} has no port")
    return target


def host_of(url: str) -> str | None:
    """The normalised host of an http(s) URL, or None when parse_url refuses the URL."""
    try:
        return parse_url(url).host
    except UnsafeURL:
        return None


def _split_authority(authority: str) -> tuple[str, str]:
    if authority.startswith("["):
        close = authority.find("]")
        if close < 0 or not (authority[close + 1 :] == "" or authority[close + 1] == ":"):
            raise UnsafeURL(f"invalid IPv6 host {authority!r}")
        return authority[: close + 1], authority[close + 2 :]
    if authority.count(":") > 1 or "[" in authority or "]" in authority:
        raise UnsafeURL(f"invalid host {authority!r}")
    host, _, port = authority.partition(":")
    return host, port


def normalise_host(host: str) -> str:
    """The one spelling of a host: see the module's docstring. Raises UnsafeURL."""
    if not host:
        raise UnsafeURL("the URL has no host")
    if host.startswith("["):
        if not host.endswith("]"):
            raise UnsafeURL(f"invalid IPv6 host {host!r}")
        try:
            address = ipaddress.IPv6Address(host[1:-1])
        except ValueError as exc:
            raise UnsafeURL(f"invalid IPv6 host {host!r}") from exc
        mapped = address.ipv4_mapped
        return str(mapped) if mapped is not None else address.compressed
    name = _to_ascii(host) if not host.isascii() or "xn--" in host.lower() else host.lower()
    if name.endswith("."):
        name = name[:-1]
    labels = name.split(".")
    if _NUMBER.fullmatch(labels[-1]):  # ends in a number: an IPv4 address or nothing
        return str(_ipv4(labels, host))
    if len(name) > 253 or not all(_LABEL.fullmatch(label) for label in labels):
        raise UnsafeURL(f"invalid host name {host!r}")
    for label in labels:
        if label.startswith("xn--"):
            _check_punycode(label, host)
    return name


def _ipv4(parts: list[str], host: str) -> ipaddress.IPv4Address:
    """The WHATWG (and inet_aton) reading: 1 to 4 numbers, decimal, octal (0..) or hex (0x..);
    the last fills the remaining bytes."""
    if len(parts) > 4 or not all(_NUMBER.fullmatch(part) for part in parts):
        raise UnsafeURL(f"invalid IPv4 host {host!r}")
    numbers = []
    for part in parts:
        if part[:2].lower() == "0x":
            numbers.append(int(part[2:] or "0", 16))
        elif len(part) > 1 and part.startswith("0"):
            if not set(part) <= set("01234567"):
                raise UnsafeURL(f"invalid IPv4 host {host!r} (not an octal number)")
            numbers.append(int(part, 8))
        else:
            numbers.append(int(part))
    *head, last = numbers
    if any(n > 255 for n in head) or last >= 256 ** (5 - len(numbers)):
        raise UnsafeURL(f"invalid IPv4 host {host!r} (a number is too large)")
    value = sum(n << (8 * (3 - i)) for i, n in enumerate(head)) + last
    return ipaddress.IPv4Address(value)


def _to_ascii(host: str) -> str:
    """UTS #46 mapping (fullwidth forms, other dots, case), then IDNA 2008 per label."""
    import idna

    try:
        mapped = idna.uts46_remap(host, std3_rules=False)
        labels = mapped.split(".")
        out = []
        for label in labels:
            if label.isascii():
                out.append(label)  # checked as an ASCII label (or punycode) by the caller
            else:  # the script check follows on its punycode, in normalise_host
                out.append(idna.alabel(label).decode("ascii"))
        return ".".join(out)
    except (idna.IDNAError, UnicodeError, ValueError) as exc:
        raise UnsafeURL(f"invalid international host name {host!r}: {exc}") from exc


def _check_punycode(label: str, host: str) -> None:
    """An `xn--` label must be the one IDNA 2008 spelling of a name that passes the checks."""
    import idna

    try:
        unicode = idna.ulabel(label)
        again = idna.alabel(unicode).decode("ascii")
    except (idna.IDNAError, UnicodeError, ValueError) as exc:
        raise UnsafeURL(f"invalid punycode in host {host!r}: {exc}") from exc
    if again != label:
        raise UnsafeURL(f"invalid punycode in host {host!r}")
    _check_script(unicode, host)


def _check_script(label: str, host: str) -> None:
    """Refuse a label whose letters mix scripts (Latin `a` with Cyrillic `а`), or that is
    spelt only with Cyrillic letters drawn like Latin ones (`аррӏе`): they imitate a name."""
    letters = [c for c in label if unicodedata.category(c).startswith("L")]
    scripts = {unicodedata.name(c, "UNKNOWN").split()[0] for c in letters}
    if len(scripts - _CJK) > 1 or (letters and set(letters) <= _CYRILLIC_LATIN):
        raise UnsafeURL(f"host {host!r} mixes look-alike letters of several scripts")


def _invisible(char: str) -> bool:
    """Whitespace, control and format characters: parsers drop or keep them differently."""
    return char.isspace() or unicodedata.category(char) in ("Cc", "Cf", "Zs", "Zl", "Zp", "Cn")


def host_pattern(pattern: str) -> str:
    """A rule's host glob spelt as normalise_host spells hosts (case, trailing dot, IDNA);
    labels holding glob characters are only lower-cased."""
    if not _GLOB & set(pattern):
        try:
            return normalise_host(pattern)
        except UnsafeURL:
            return pattern.lower()
    labels = pattern.rstrip(".").split(".") if pattern.endswith(".") else pattern.split(".")
    out = []
    for label in labels:
        if _GLOB & set(label) or label.isascii():
            out.append(label.lower())
        else:
            try:
                out.append(_to_ascii(label))
            except UnsafeURL:
                out.append(label.lower())
    return ".".join(out)
