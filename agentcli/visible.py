"""Untrusted text made safe for a terminal: every character a terminal could act on, or that
would not show, is replaced by a visible mark.

Model text, tool arguments and results, file names, error text from servers, thread titles:
all of it can hold escape sequences (cursor moves, erase line, window titles, clipboard
writes), carriage returns and backspaces that overwrite what was printed, bidi overrides that
reverse it, and zero-width characters that hide in it. On a terminal any of these can make a
review show one command while another runs. `visible()` is the one function every render
site passes such text through.

A mark is `⟦NAME⟧` (`⟦ESC⟧`, `⟦CR⟧`, `⟦U+202E⟧`). The opening bracket U+27E6 is itself marked
when the text holds it, so every `⟦` on the screen starts a mark and no text can pass itself
off as one: the mapping is one-to-one (`unmark` undoes it; the tests check that).

The core imports this; it uses no Rich (agentcli/ui/safe.py styles the marks).
"""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Any

OPEN, CLOSE = "⟦", "⟧"

_C0 = (
    "NUL SOH STX ETX EOT ENQ ACK BEL BS HT LF VT FF CR SO SI "
    "DLE DC1 DC2 DC3 DC4 NAK SYN ETB CAN EM SUB ESC FS GS RS US"
).split()
NAMES = {chr(i): name for i, name in enumerate(_C0)} | {"\x7f": "DEL"}
_BY_NAME = {name: char for char, name in NAMES.items()} | {"SP": " "}

# Printable by category, yet blank or acting on their neighbours: variation selectors, the
# combining grapheme joiner, Mongolian variation selectors, Hangul fillers, braille blank.
_INVISIBLE = (
    {chr(c) for c in range(0xFE00, 0xFE10)}
    | {chr(c) for c in range(0xE0100, 0xE01F0)}
    | {chr(c) for c in range(0x180B, 0x1810)}
    | {"\u034f", "\u115f", "\u1160", "\u3164", "\uffa0", "\u2800", OPEN}
)
# Cc controls (C0, DEL, C1), Cf format (bidi, zero-width, tags, BOM, soft hyphen),
# Cs lone surrogates, line and paragraph separators.
_CATEGORIES = {"Cc", "Cf", "Cs", "Zl", "Zp"}


def unsafe(char: str, multiline: bool = True) -> bool:
    """Whether `char` is shown as a mark. \n and \t are kept in multi-line text."""
    if char in "\n\t":
        return not multiline
    if char == " " or " " < char < "\x7f":
        return False
    category = unicodedata.category(char)
    return category in _CATEGORIES or category == "Zs" or char in _INVISIBLE


def mark(char: str) -> str:
    name = NAMES.get(char) or ("SP" if char == " " else f"U+{ord(char):04X}")
    return f"{OPEN}{name}{CLOSE}"


_TRAILING = re.compile(r"[ \t]+(?=\n|$)")


def parts(text: str, multiline: bool = True, trailing: bool = False) -> list[tuple[str, bool]]:
    """`text` as runs of (piece, is_mark), marks one character each. `trailing` marks the
    spaces and tabs that end a line too (they would not show, and in a command they count)."""
    out: list[tuple[str, bool]] = []
    start = 0
    ends = {i for m in _TRAILING.finditer(text) for i in range(*m.span())} if trailing else ()
    for index, char in enumerate(text):
        if unsafe(char, multiline) or index in ends:
            if start < index:
                out.append((text[start:index], False))
            out.append((mark(char), True))
            start = index + 1
    if start < len(text):
        out.append((text[start:], False))
    return out


def visible(text: object, multiline: bool = True, trailing: bool = False) -> str:
    """`text` (str() of it, if not a string) with every unsafe character as a mark.

    multiline=False also marks \n and \t: for names, ids, titles, paths, one-line fields.
    trailing=True marks the blanks that end a line (the review shows every byte)."""
    text = text if isinstance(text, str) else str(text)
    if text.isascii() and text.isprintable() and not (trailing and text.endswith(" ")):
        return text  # the common case, fast: no controls, no newlines or tabs
    return "".join(piece for piece, _ in parts(text, multiline, trailing))


def line(text: object) -> str:
    """A one-line field: newlines and tabs are marked too."""
    return visible(text, multiline=False)


_MARK = re.compile(re.escape(OPEN) + r"(U\+[0-9A-F]{4,6}|[A-Z0-9]{2,3})" + re.escape(CLOSE))


def unmark(shown: str) -> str:
    """The text `visible()` was given (for tests, and to prove the marks are one-to-one)."""

    def back(match: re.Match[str]) -> str:
        name = match.group(1)
        return chr(int(name[2:], 16)) if name.startswith("U+") else _BY_NAME[name]

    return _MARK.sub(back, shown)


_SURROGATE = re.compile("[\ud800-\udfff]")


def dumps(value: Any, indent: int | None = None) -> str:
    """JSON as readable as `ensure_ascii=False`, but always encodable: a lone surrogate
    (valid in a Python string, not in UTF-8) is written as its `\\udXXX` escape, which JSON
    allows and which loads back to the same string. Control characters are escaped by
    json itself; the document stays exact data."""
    text = json.dumps(value, indent=indent, ensure_ascii=False)
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
