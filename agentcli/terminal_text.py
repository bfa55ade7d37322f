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

The core imports this; it uses no Rich (agentcli/ui/safe_text.py styles the marks).
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

# Unicode's Default_Ignorable_Code_Point property (DerivedCoreProperties.txt, Unicode 16.0;
# unchanged since 15.0): characters a renderer shows as nothing when it does not know them,
# assigned or not. Python's unicodedata has no such property, so the ranges are listed here.
DEFAULT_IGNORABLE = (
    (0x00AD, 0x00AD),  # soft hyphen
    (0x034F, 0x034F),  # combining grapheme joiner
    (0x061C, 0x061C),  # Arabic letter mark
    (0x115F, 0x1160),  # Hangul choseong and jungseong fillers
    (0x17B4, 0x17B5),  # Khmer inherent vowels
    (0x180B, 0x180F),  # Mongolian variation selectors and vowel separator
    (0x200B, 0x200F),  # zero-width space, joiners, LRM, RLM
    (0x202A, 0x202E),  # bidi embeddings and overrides
    (0x2060, 0x206F),  # word joiner, invisible operators, isolates; U+2065 unassigned
    (0x3164, 0x3164),  # Hangul filler
    (0xFE00, 0xFE0F),  # variation selectors
    (0xFEFF, 0xFEFF),  # zero-width no-break space (BOM)
    (0xFFA0, 0xFFA0),  # halfwidth Hangul filler
    (0xFFF0, 0xFFF8),  # unassigned
    (0x1BCA0, 0x1BCA3),  # shorthand format controls
    (0x1D173, 0x1D17A),  # musical symbol format controls
    (0xE0000, 0xE0FFF),  # tags, variation selectors 17-256, the rest unassigned
)
_IGNORABLE = re.compile("[" + "".join(f"{chr(a)}-{chr(b)}" for a, b in DEFAULT_IGNORABLE) + "]")

# Graphic by category but drawn blank, or as a stand-in for something not there: the braille
# blank, the ideographic half fill space, the object replacement character (it stands for an
# embedded object; terminals draw nothing or a box), the musical null notehead and the two
# SignWriting location spaces (glyphs of empty space); and the opening bracket of a mark.
# Unicode has no property for a blank glyph: these are the graphic characters whose name
# says they are blank or empty space (the symbols *for* a space or a blank, U+2420 and
# U+2422, draw a glyph and are not among them).
BLANK_GLYPHS = frozenset("\u2800\u303f\ufffc\U0001d159\U0001da7f\U0001da80")
_INVISIBLE = BLANK_GLYPHS | {OPEN}
# Cc controls (C0, DEL, C1), Cf format (bidi, zero-width, tags, BOM, soft hyphen), Cs lone
# surrogates, Co private use (a glyph only some fonts have), Cn unassigned and noncharacters
# (as of Python's Unicode database: a terminal may know it as a newer format character, or
# drop it), line and paragraph separators, and every space but the ASCII one.
_CATEGORIES = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Zs"}
# Combining marks draw over or beside the character before them, in its cell: U+0338 after
# `=` reads as `≠`, a spacing mark (Mc) after `l` is drawn on it. So do the Hangul medial
# vowels and final consonants (jungseong, jongseong), which a terminal joins to the
# syllable before them. One is shown as itself only on a base that is not ASCII and is
# itself shown (accents on letters of other scripts); on an ASCII base, on a mark or at
# the start, it is a mark.
_COMBINING = {"Mn", "Me", "Mc"}
_CONJOINING = ("HANGUL JUNGSEONG ", "HANGUL JONGSEONG ")


def combines(char: str) -> bool:
    """Whether `char` is drawn on the character before it (a combining mark, a conjoining
    Hangul vowel or final consonant)."""
    if char.isascii():
        return False
    if unicodedata.category(char) in _COMBINING:
        return True
    jamo = "\u1160" <= char <= "\u11ff" or "\ud7b0" <= char <= "\ud7ff"  # where they are
    return jamo and unicodedata.name(char, "").startswith(_CONJOINING)


def unsafe(char: str, multiline: bool = True, base: str = "") -> bool:
    """Whether `char` is shown as a mark. \n and \t are kept in multi-line text. `base` is
    the character a combining mark would draw on ("" if none, or if that was a mark)."""
    if char in "\n\t":
        return not multiline
    if char == " " or " " < char < "\x7f":
        return False
    category = unicodedata.category(char)
    if category in _CATEGORIES or char in _INVISIBLE or _IGNORABLE.match(char):
        return True
    return combines(char) and (base == "" or base.isascii())


TAB_STOP = 8  # a terminal's default tab stops: every 8 columns


def cells(char: str) -> int:
    """The columns a shown character takes: 2 for wide and full-width ones, 0 for one drawn
    on the character before it, else 1. Only used to put tab stops where a terminal would."""
    if combines(char):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def mark(char: str) -> str:
    name = NAMES.get(char) or ("SP" if char == " " else f"U+{ord(char):04X}")
    return f"{OPEN}{name}{CLOSE}"


_TRAILING = re.compile(r"[ \t]+(?=\n|$)")


def parts(
    text: str,
    multiline: bool = True,
    trailing: bool = False,
    marked: bool = False,
    tabs: bool = False,
) -> list[tuple[str, bool]]:
    """`text` as runs of (piece, is_mark), marks one character each. `trailing` marks the
    spaces and tabs that end a line too (they would not show, and in a command they count).
    `marked`: the text already holds marks (it is visible()'s output after a parser that may
    have decoded new characters into it), so `⟦` is left as it is. `tabs`: a tab is layout,
    replaced by the spaces up to the next tab stop (every TAB_STOP columns from the start of
    its line, as a terminal moves the cursor), in one-line text too; never a raw tab, which
    moves a terminal's cursor over what is drawn without erasing it. Only for text that
    nothing runs (a result, a file's lines): where a tab and spaces differ to what runs (a
    command under review), it stays a mark."""
    out: list[tuple[str, bool]] = []
    start = 0
    ends = {i for m in _TRAILING.finditer(text) for i in range(*m.span())} if trailing else ()
    base = ""  # what a combining mark here would draw on: the last shown non-combining char
    column = 0  # where the character stands in its line, in cells (for tabs)
    for index, char in enumerate(text):
        if tabs and char == "\t" and index not in ends:
            if start < index:
                out.append((text[start:index], False))
            spaces = TAB_STOP - column % TAB_STOP
            out.append((" " * spaces, False))
            column += spaces
            start = index + 1
            base = " "
        elif (unsafe(char, multiline, base) and not (marked and char == OPEN)) or index in ends:
            if start < index:
                out.append((text[start:index], False))
            shown = mark(char)
            out.append((shown, True))
            column += len(shown)
            start = index + 1
            base = ""
        else:
            column = 0 if char == "\n" else column + cells(char)
            if not combines(char):
                base = "" if char == OPEN else char  # nothing may draw over a mark's bracket
    if start < len(text):
        out.append((text[start:], False))
    return out


def visible(
    text: object,
    multiline: bool = True,
    trailing: bool = False,
    marked: bool = False,
    tabs: bool = False,
) -> str:
    """`text` (str() of it, if not a string) with every unsafe character as a mark.

    multiline=False also marks \n and \t: for names, ids, titles, paths, one-line fields.
    trailing=True marks the blanks that end a line (the review shows every byte).
    marked=True leaves the marks already in `text` alone (see parts).
    tabs=True expands tabs to the next tab stop, as layout (see parts)."""
    text = text if isinstance(text, str) else str(text)
    if text.isascii() and text.isprintable() and not (trailing and text.endswith(" ")):
        return text  # the common case, fast: no controls, no newlines or tabs
    return "".join(piece for piece, _ in parts(text, multiline, trailing, marked, tabs))


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


def dumps_shown(value: Any) -> str:
    """JSON on one line in which every character shows as itself: those visible() would mark
    (bidi overrides, zero-width, controls, `⟦`) are written as their `\\uXXXX` escapes, so
    the text loads back to the same value and can be put before a person to edit."""
    out: list[str] = []
    for piece, is_mark in parts(dumps(value), multiline=False):
        if not is_mark:
            out.append(piece)
            continue
        code = ord(unmark(piece))
        if code > 0xFFFF:  # as a UTF-16 surrogate pair, the only escape JSON has for it
            code -= 0x10000
            out.append(f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}")
        else:
            out.append(f"\\u{code:04x}")
    return "".join(out)
