"""The literal value bash gives a word of a tree-sitter-bash tree, or None when it is not literal.

A word is literal when bash passes it on exactly as written after quote removal: no expansion,
glob, tilde, brace, comment or history character outside quotes. Anything else is None: the
callers fail closed on it.
"""

from __future__ import annotations

from typing import Any

# Unquoted characters that mean nothing to bash inside a word (no glob, tilde, brace, comment,
# history or expansion); anything else outside quotes makes the word not literal.
_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./,:=+@%")
WORD_TYPES = {"word", "number", "string", "raw_string", "concatenation"}


def text(node: Any, source: bytes) -> str:
    return source[node.start_byte : node.end_byte].decode("utf-8", "replace")


def word_value(node: Any, source: bytes) -> str | None:
    """The literal value bash gives this word, or None when it expands, globs or is unclear."""
    raw = source[node.start_byte : node.end_byte].decode("utf-8")
    kind = node.type
    if kind in ("word", "number"):
        return _unquoted(raw)
    if kind == "raw_string":
        inner = raw[1:-1]
        ok = len(raw) >= 2 and raw[0] == raw[-1] == "'" and "'" not in inner
        return inner if ok else None
    if kind == "string":
        if any(c.type not in ('"', "string_content") for c in node.children):
            return None
        return _double_quoted(raw)
    if kind == "concatenation":
        parts = []
        for left, right in zip(node.children, node.children[1:], strict=False):
            if left.end_byte != right.start_byte:
                return None  # tree-sitter joined what bash would split
        for child in node.children:
            value = word_value(child, source) if child.type in WORD_TYPES else None
            if value is None:
                return None
            parts.append(value)
        return "".join(parts)
    return None


def _unquoted(text: str) -> str | None:
    out, chars = [], iter(text)
    for char in chars:
        if char == "\\":
            escaped = next(chars, "\n")
            if escaped == "\n":
                return None  # a line continuation or a trailing backslash
            out.append(escaped)
        elif char in _SAFE:
            out.append(char)
        else:
            return None
    return "".join(out) if out else None


def _double_quoted(text: str) -> str | None:
    if len(text) < 2 or text[0] != '"' or text[-1] != '"':
        return None
    out, chars = [], iter(text[1:-1])
    for char in chars:
        if char == "\\":
            escaped = next(chars, "")
            if escaped in ("", "\n"):
                return None
            out.append(escaped if escaped in '$`"\\' else "\\" + escaped)
        elif char in '$`"':
            return None
        else:
            out.append(char)
    return "".join(out)
