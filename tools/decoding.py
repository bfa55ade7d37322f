"""Response bodies decoded in bounded memory: a decoder never gives more than it is asked for.

httpx decodes a Content-Encoding itself (gzip and deflate, and zstd or br when those
packages are installed) and hands each decoded chunk over whole: 32 KB of zstd on the wire
becomes gigabytes before a size check sees it. fetch_url asks for gzip or deflate only
(`ACCEPT_ENCODING`), reads the raw bytes, and decodes them here, asking zlib for at most
the room it has left. Any other encoding, or more than one, is refused.
"""

from __future__ import annotations

import zlib

ACCEPT_ENCODING = "gzip, deflate"
_GZIP = 16 + zlib.MAX_WBITS  # a gzip header and trailer
_ZLIB = zlib.MAX_WBITS  # a zlib header and trailer: what "deflate" means in HTTP
_RAW = -zlib.MAX_WBITS  # no header: the "deflate" some servers send
_CODINGS = {"gzip": _GZIP, "x-gzip": _GZIP, "deflate": _ZLIB}


class Undecodable(Exception):
    """A body in an encoding this module does not decode, or corrupt."""


class Identity:
    """No encoding: the bytes as they came."""

    finished = False  # the body ends when the connection says so

    def decode(self, data: bytes, room: int) -> bytes:
        return data[:room]


class Inflate:
    """gzip or deflate, decoded at most `room` bytes per call."""

    def __init__(self, coding: str) -> None:
        self.coding = coding
        self._wbits = _CODINGS[coding]
        self._head = b""  # deflate: the first bytes, until they show a zlib header or not
        self._z = None if self._wbits == _ZLIB else zlib.decompressobj(self._wbits)

    @property
    def finished(self) -> bool:
        """The compressed stream has ended: anything after it is ignored."""
        return self._z is not None and self._z.eof

    def decode(self, data: bytes, room: int) -> bytes:
        """At most `room` bytes of what `data` decodes to. Input beyond what fills the room
        is dropped: the caller stops reading once it has no room left."""
        if self._z is None:
            self._head += data
            if len(self._head) < 2:
                return b""
            data, self._head = self._head, b""
            self._z = zlib.decompressobj(_ZLIB if _zlib_header(data) else _RAW)
        out = bytearray()
        try:
            while data and len(out) < room and not self._z.eof:
                out += self._z.decompress(data, room - len(out))
                data = self._z.unconsumed_tail
        except zlib.error as exc:
            raise Undecodable(f"the {self.coding}-encoded body is corrupt: {exc}") from exc
        return bytes(out)


def _zlib_header(head: bytes) -> bool:
    """Whether two bytes open a zlib stream (RFC 1950: deflate method, checksum)."""
    return head[0] & 0x0F == 8 and (head[0] << 8 | head[1]) % 31 == 0


def decoder_for(content_encoding: str) -> Identity | Inflate:
    """The decoder for a Content-Encoding header's value, or Undecodable."""
    codings = [c.strip().lower() for c in content_encoding.split(",")]
    codings = [c for c in codings if c not in ("", "identity")]
    if not codings:
        return Identity()
    if len(codings) > 1:
        raise Undecodable(f"the body is encoded more than once ({content_encoding!r})")
    if codings[0] not in _CODINGS:
        raise Undecodable(
            f"the body is encoded as {codings[0]!r}, which fetch_url does not decode "
            f"(it asks for {ACCEPT_ENCODING})"
        )
    return Inflate(codings[0])
