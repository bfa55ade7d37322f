"""Adding a host to `[sandbox] network` in the person's config file: "add to the config" at
an egress question (tools/egress_questions.py).

The edit is the smallest one that says it, and everything else in the file is kept byte for
byte, comments included: the entry is put first in the existing list (right after its
`[`), or a `network = [...]` line goes under the `[sandbox]` header (replacing a
`network = false`), or a `[sandbox]` table is appended. Each place the text could mean is
tried, and a candidate is written only when TOML reads it as exactly the file's old data
with that one entry added: a `network = [` inside a multi-line string, or in another table,
changes something else and is not taken. When no candidate reads so, nothing is written
and the person is told the line to add. The write is atomic (config/config_write.py).
"""

from __future__ import annotations

import copy
import json
import re
import tomllib
from pathlib import Path
from typing import Any

from agentcli.config.config_write import read_config, write_config
from agentcli.errors import ConfigError

_KEY = r"""(?:network|"network"|'network')"""
_LIST_START = re.compile(
    rf"^[ \t]*(?:(?:sandbox|\"sandbox\"|'sandbox')[ \t]*\.[ \t]*)?{_KEY}[ \t]*=[ \t]*\[", re.M
)
_FALSE = re.compile(rf"^([ \t]*{_KEY}[ \t]*=[ \t]*)false\b", re.M)
_HEADER = re.compile(r"""^[ \t]*\[[ \t]*(?:sandbox|"sandbox"|'sandbox')[ \t]*\][^\n]*$""", re.M)


def network_entry(host: str, port: int) -> str:
    """The `[sandbox] network` entry for exactly this host and port (tools/egress.py)."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def add_network_host(path: Path, entry: str) -> None:
    """Add ``entry`` to `[sandbox] network` in the config file at ``path`` (created if
    missing); ConfigError, and nothing written, when that cannot be done safely."""
    before = read_config(path)
    try:
        text = before.decode("utf-8")
        data = tomllib.loads(text)
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"config file {path} does not read: {exc}") from None
    sandbox = data.get("sandbox", {})
    current = sandbox.get("network", False) if isinstance(sandbox, dict) else None
    if isinstance(current, list) and entry in current:
        return
    if current is True or not isinstance(current, bool | list):
        raise ConfigError(f"cannot add {entry} to [sandbox] network in {path}: {_by_hand(entry)}")
    expected = copy.deepcopy(data)
    listed: list[Any] = current if isinstance(current, list) else []
    expected.setdefault("sandbox", {})["network"] = [entry, *listed]
    for candidate in _candidates(text, entry, current):
        if _reads_as(candidate, expected):
            write_config(path, before, candidate.encode("utf-8"))
            return
    raise ConfigError(
        f"cannot add {entry} to [sandbox] network in {path} without rewriting other lines:"
        f" {_by_hand(entry)}"
    )


def _candidates(text: str, entry: str, current: bool | list[Any]) -> list[str]:
    quoted = json.dumps(entry)
    if isinstance(current, list):
        return [f"{text[: m.end()]}{quoted}, {text[m.end() :]}" for m in _LIST_START.finditer(text)]
    found = [f"{text[: m.end(1)]}[{quoted}]{text[m.end() :]}" for m in _FALSE.finditer(text)]
    line = f"network = [{quoted}]"
    found += [f"{text[: m.end()]}\n{line}{text[m.end() :]}" for m in _HEADER.finditer(text)]
    gap = "" if not text else "\n" if text.endswith("\n") else "\n\n"
    return [*found, f"{text}{gap}[sandbox]\n{line}\n"]


def _reads_as(candidate: str, expected: dict[str, Any]) -> bool:
    try:
        return tomllib.loads(candidate) == expected
    except tomllib.TOMLDecodeError:
        return False


def _by_hand(entry: str) -> str:
    return f"add it yourself: [sandbox] network = [{json.dumps(entry)}, ...]"
