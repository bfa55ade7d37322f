"""Redactor: replaces known secret values in text with ``[redacted NAME]``.

Built once per session from the secrets' values (the model's API key, credential-looking
environment variables, passwords in URLs), and applied to everything that is stored or
leaves the process: tool results before they reach the checkpoint and the model, the live
output of a command, error text kept in the thread index, traces, notify documents,
exports and the --debug traceback.

It finds a value as it is and the encoded copies a command prints cheaply (`encodings`):
base64 (standard and URL-safe, at any of the three alignments in a longer stream, with
or without padding), hex (lower and upper case), percent-encoding and JSON string escapes;
each may be cut into lines (``base64`` wraps at 76 columns, ``xxd -p`` at 60, ``fold``).
It does not find a value reversed, compressed, encrypted, encoded twice or cut by other
characters: it is the second line; the first is that tools never get the secrets in their
environment (see tools.environment).

Matching is one regular expression of literal alternatives: linear in the text's length.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from .encodings import encodings
from .environment import is_credential

MIN_CHARS = 8
"""Shorter values are not redacted: "true" or "1234" would blank out unrelated text."""

LINE_BREAK = r"(?:\r?\n)?"
"""What may stand between two characters of a value: a line break (a wrapped encoding)."""

_URL_USERINFO = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://([^/\s:@]*):([^/\s@]+)@")


class Redactor:
    """Replaces each known secret value or encoded copy, longest first, by
    ``[redacted LABEL]`` (``[redacted LABEL as base64]`` for an encoded copy)."""

    def __init__(
        self,
        secrets: Mapping[str, str] | Iterable[tuple[str, str]] = (),
        *,
        protected: Iterable[str] = (),
    ) -> None:
        pairs = secrets.items() if isinstance(secrets, Mapping) else secrets
        # values no tool environment may carry, under any name (the model's API key)
        self.protected = frozenset(value for value in protected if value)
        labels: dict[str, str] = {}
        names: set[str] = set()
        for label, value in pairs:
            names.add(label)
            for piece in _pieces(value):
                labels.setdefault(piece, label)
            for piece in _encoded_pieces(value):
                for how, text in encodings(piece):
                    labels.setdefault(text, f"{label} as {how}")
        self._labels, self._names = labels, len(names)
        self._bare = {_bare(text): label for text, label in reversed(labels.items())}
        self._pattern = re.compile(_trie_pattern(labels)) if labels else None

    def __bool__(self) -> bool:
        return self._pattern is not None

    def __repr__(self) -> str:  # never the values
        return f"Redactor({len(self._labels)} forms of {self._names} secrets)"

    @property
    def longest(self) -> int:
        """The length of the longest match (line breaks included): how much text a stream
        must hold back."""
        return max((3 * len(text) - 2 for text in self._labels), default=0)

    def __call__(self, text: str) -> str:
        if self._pattern is None or not text:
            return text
        return self._pattern.sub(lambda m: f"[redacted {self._label(m.group(0))}]", text)

    def _label(self, found: str) -> str:
        return self._bare[_bare(found)]

    def head(self, text: str, cut: int) -> tuple[str, int]:
        """The redacted text before ``cut``, and where it ends: ``cut``, moved back to the
        start of a secret that it would split. One pass, for a stream's next piece."""
        if self._pattern is None or cut <= 0:
            return text[: max(cut, 0)], max(cut, 0)
        pieces, at = [], 0
        for match in self._pattern.finditer(text):  # from 0: as redacting all of it would
            if match.end() > cut:
                cut = min(match.start(), cut)
                break
            pieces += [text[at : match.start()], f"[redacted {self._label(match.group(0))}]"]
            at = match.end()
        pieces.append(text[at:cut])
        return "".join(pieces), cut

    def value(self, data: Any) -> Any:
        """``data`` with every string inside (lists, tuples, dicts: keys too) redacted."""
        if isinstance(data, str):
            return self(data)
        if isinstance(data, list | tuple):
            return type(data)(self.value(item) for item in data)
        if isinstance(data, dict):
            return {self.value(key): self.value(item) for key, item in data.items()}
        return data


def _bare(text: str) -> str:
    return text.replace("\r", "").replace("\n", "")


def _trie_pattern(texts: Iterable[str]) -> str:
    """One pattern for all ``texts``, each also cut by line breaks between any two of its
    characters. Texts that begin alike share their beginning (a trie), so each position
    of the text tries each distinct next character once, not each secret's each form;
    at a text's end that continues into a longer one, the longer is tried first."""
    root: dict[str, dict] = {}
    for text in texts:
        node = root
        for char in text:
            node = node.setdefault(char, {})
        node[""] = {}
    return _choice(root)


def _choice(node: dict[str, dict]) -> str:
    branches = [_path(char, child) for char, child in node.items() if char]
    return branches[0] if len(branches) == 1 else f"(?:{'|'.join(branches)})"


def _path(char: str, node: dict[str, dict]) -> str:
    """``char`` and what may follow it: a run of single characters is one flat sequence
    (no nesting: a 3,000-character key needs no deep recursion)."""
    parts = [re.escape(char)]
    while len(node) == 1 and "" not in node:
        ((char, node),) = node.items()
        parts += [LINE_BREAK, re.escape(char)]
    rest = {c: child for c, child in node.items() if c}
    if rest:
        more = LINE_BREAK + _choice(rest)
        parts.append(f"(?:{more})?" if "" in node else more)
    return "".join(parts)


def _pieces(value: str) -> list[str]:
    """What to look for as is: the value, each long line of a multi-line value (a PEM key),
    the password of a URL in it and the URL's ``user:password@`` part."""
    pieces = [value] if len(value) >= MIN_CHARS else []
    if "\n" in value:
        pieces += [line.strip() for line in value.splitlines() if len(line.strip()) >= 16]
    for match in _URL_USERINFO.finditer(value):
        pieces.append(f"{match.group(1)}:{match.group(2)}@")
        if len(match.group(2)) >= MIN_CHARS:
            pieces.append(match.group(2))
    return pieces


def _encoded_pieces(value: str) -> list[str]:
    """What to look for encoded: the whole value and the password of a URL in it."""
    pieces = [value] if len(value) >= MIN_CHARS else []
    pieces += [m.group(2) for m in _URL_USERINFO.finditer(value) if len(m.group(2)) >= MIN_CHARS]
    return pieces


def environment_secrets(environ: Mapping[str, str]) -> list[tuple[str, str]]:
    """(name, value) for each variable that holds a credential (tools.environment)."""
    return [(name, value) for name, value in environ.items() if is_credential(name, value)]
