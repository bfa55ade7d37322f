"""Whether a secret is in some bytes, as is or in an encoding that can be undone: the
check of the secrets tests, independent of agentcli's redactor (tools/encodings.py).

The text is looked at as it is and with its line breaks taken out (wrapped encodings),
then each of those with percent-escapes and JSON escapes undone; in each view, every run
of base64 characters (either alphabet) is decoded at each of the four character offsets,
and every run of hex digits at both nibble offsets. A secret found in any view or decoded
run is exposed.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from urllib.parse import unquote_to_bytes

_BASE64_RUN = re.compile(rb"[A-Za-z0-9+/_-]{8,}")
_HEX_RUN = re.compile(rb"[0-9A-Fa-f]{16,}")
_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')


def exposed(blob: bytes | str, secrets: list[str]) -> list[str]:
    """The secrets that ``blob`` holds, as is or decoded (see the module's docstring)."""
    data = blob.encode("utf-8", "surrogateescape") if isinstance(blob, str) else blob
    views = _views(data)
    found = []
    for secret in secrets:
        needle = secret.encode()
        if any(needle in view for view in views):
            found.append(secret)
    return found


def _views(data: bytes) -> list[bytes]:
    plain = [data, data.replace(b"\r", b"").replace(b"\n", b"")]
    views = list(plain)
    for view in plain:
        views.append(unquote_to_bytes(view))
        views += [_json_unescaped(m.group(0)) for m in _JSON_STRING.finditer(view)]
    decoded: list[bytes] = []
    for view in views:
        decoded += _base64_runs(view) + _hex_runs(view)
    return views + decoded


def _json_unescaped(quoted: bytes) -> bytes:
    try:
        return json.loads(quoted).encode("utf-8", "surrogateescape")
    except (ValueError, UnicodeDecodeError):
        return b""


def _base64_runs(view: bytes) -> list[bytes]:
    out = []
    for match in _BASE64_RUN.finditer(view):
        run = match.group(0).translate(bytes.maketrans(b"-_", b"+/"))
        for shift in range(4):
            part = run[shift:]
            part = part[:-1] if len(part) % 4 == 1 else part + b"=" * (-len(part) % 4)
            try:
                out.append(base64.b64decode(part))
            except (binascii.Error, ValueError):
                pass
    return out


def _hex_runs(view: bytes) -> list[bytes]:
    out = []
    for match in _HEX_RUN.finditer(view):
        run = match.group(0)
        for shift in range(2):
            part = run[shift:]
            out.append(bytes.fromhex(part[: len(part) - len(part) % 2].decode()))
    return out


def shown_in_chunks(live_view: type, redactor: object, data: bytes, cuts: list[int]) -> str:
    """What a live view (``RedactedStream``) shows of ``data`` cut at ``cuts``, joined."""
    shown: list[str] = []
    live = live_view(shown.append, redactor)
    points = sorted({min(c, len(data)) for c in cuts} | {0, len(data)})
    for start, end in zip(points, points[1:], strict=False):
        live.add(data[start:end])
    live.flush()
    return "".join(shown)
