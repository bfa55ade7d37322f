"""The encoded copies of a secret a command prints cheaply, as text to look for.

For a value, each of (how, text):

- base64, standard and URL-safe alphabets, at each of the three alignments the value may
  have in a longer stream (it starts at byte offset 0, 1 or 2 mod 3 of what was encoded).
  Only the characters that depend on the value's bytes alone are kept: the first and last
  one or two characters also hold bits of the bytes around it, and padding is never part
  of the text, so a copy is found with or without ``=``, alone or inside a longer stream;
- hex, lower and upper case, without separators (``xxd -p``, ``od -An -tx1 | tr -d ' \\n'``,
  Python's ``bytes.hex``);
- percent-encoding: of the bytes URLs reserve (``urllib.parse.quote(value, safe="")``,
  ``%2F`` or ``%2f``) and of every byte (``%73%6B...``, upper and lower case);
- JSON string escapes: ``json.dumps`` of a value holding ``"``, ``\\``, control or
  non-ASCII characters.

A form equal to the value itself, or to another form, is given once.
"""

from __future__ import annotations

import base64
import json
from urllib.parse import quote

_URL_SAFE = str.maketrans("+/", "-_")


def encodings(value: str) -> list[tuple[str, str]]:
    data = value.encode("utf-8")
    forms: list[tuple[str, str]] = []
    for offset in range(3):
        text = base64_core(data, offset)
        forms += [("base64", text), ("base64", text.translate(_URL_SAFE))]
    forms += [("hex", data.hex()), ("hex", data.hex().upper())]
    reserved = quote(value, safe="")
    forms += [("percent-encoding", reserved), ("percent-encoding", _lower_escapes(reserved))]
    every = "".join(f"%{byte:02X}" for byte in data)
    forms += [("percent-encoding", every), ("percent-encoding", every.lower())]
    forms += [
        ("JSON", json.dumps(value)[1:-1]),
        ("JSON", json.dumps(value, ensure_ascii=False)[1:-1]),
    ]
    seen = {value}
    unique = []
    for how, text in forms:
        if text and text not in seen:
            seen.add(text)
            unique.append((how, text))
    return unique


def base64_core(data: bytes, offset: int) -> str:
    """The base64 characters that encode ``data`` alone when it starts ``offset`` bytes
    into a 3-byte group: each character covers 6 bits, and only those whose bits all lie
    inside ``data`` are kept."""
    encoded = base64.b64encode(bytes(offset) + data).decode("ascii")
    start = -(-8 * offset // 6)  # the first character past the bytes before it
    end = 8 * (offset + len(data)) // 6  # the last character within data
    return encoded[start:end]


def _lower_escapes(text: str) -> str:
    """``%2F`` as ``%2f``: percent-encoders differ in the case of the hex digits."""
    parts = text.split("%")
    return parts[0] + "".join(f"%{part[:2].lower()}{part[2:]}" for part in parts[1:])
