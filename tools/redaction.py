"""Redactor: replaces known secret values in text with ``[redacted NAME]``.

Built once per session from the secrets' values (the model's API key, credential-looking
environment variables, passwords in URLs), and applied to what is stored or sent: tool
results before they reach the checkpoint and the model, the live output of a command,
error text kept in the thread index. It only finds the values as they are: a command that
encodes a secret (base64, reversed, split) gets past it. It is the second line; the first
is that tools never get the secrets in their environment (see tools.environment).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from .environment import is_credential

MIN_CHARS = 8
"""Shorter values are not redacted: "true" or "1234" would blank out unrelated text."""

_URL_USERINFO = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://([^/\s:@]*):([^/\s@]+)@")


class Redactor:
    """Replaces each known secret value, longest first, by ``[redacted LABEL]``."""

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
        for label, value in pairs:
            for piece in _pieces(value):
                labels.setdefault(piece, label)
        self._labels = labels
        ordered = sorted(labels, key=len, reverse=True)
        self._pattern = re.compile("|".join(map(re.escape, ordered))) if ordered else None

    def __bool__(self) -> bool:
        return self._pattern is not None

    def __repr__(self) -> str:  # never the values
        return f"Redactor({len(self._labels)} values of {len(set(self._labels.values()))} secrets)"

    @property
    def longest(self) -> int:
        """The length of the longest secret: how much text a stream must hold back."""
        return max(map(len, self._labels), default=0)

    def __call__(self, text: str) -> str:
        if self._pattern is None or not text:
            return text
        return self._pattern.sub(lambda m: f"[redacted {self._labels[m.group(0)]}]", text)

    def safe_cut(self, text: str, cut: int) -> int:
        """``cut``, moved back to the start of a secret that it would split."""
        if self._pattern is None or cut <= 0:
            return cut
        for match in self._pattern.finditer(text):  # from 0: as redacting all of it would
            if match.end() > cut:
                return min(match.start(), cut)
        return cut

    def value(self, data: Any) -> Any:
        """``data`` with every string inside (lists, tuples, dicts) redacted."""
        if isinstance(data, str):
            return self(data)
        if isinstance(data, list | tuple):
            return type(data)(self.value(item) for item in data)
        if isinstance(data, dict):
            return {key: self.value(item) for key, item in data.items()}
        return data


def _pieces(value: str) -> list[str]:
    """What to look for: the value, each long line of a multi-line value (a PEM key), the
    password of a URL in it and the URL's ``user:password@`` part."""
    pieces = [value] if len(value) >= MIN_CHARS else []
    if "\n" in value:
        pieces += [line.strip() for line in value.splitlines() if len(line.strip()) >= 16]
    for match in _URL_USERINFO.finditer(value):
        pieces.append(f"{match.group(1)}:{match.group(2)}@")
        if len(match.group(2)) >= MIN_CHARS:
            pieces.append(match.group(2))
    return pieces


def environment_secrets(environ: Mapping[str, str]) -> list[tuple[str, str]]:
    """(name, value) for each variable that holds a credential (tools.environment)."""
    return [(name, value) for name, value in environ.items() if is_credential(name, value)]
