"""Writing a rule into the config file: `A` at a review can make its rule permanent.

The rule is appended as a `[[approval.rules]]` table; what the file held before is kept byte
for byte. The new text is checked first (it must still be valid TOML and its rules must pass
their checks, the new rule's examples included), then written atomically: a temporary file
beside it, flushed to disk, renamed over it, with the old file's permissions. A missing file
(and its folder) is created.
"""

from __future__ import annotations

import json
import os
import tempfile
import tomllib
from pathlib import Path

from agentcli.config.checks import check_rules
from agentcli.errors import ConfigError


def rule_table(
    tool: str, match: str, decision: str = "allow", examples: tuple[str, ...] = ()
) -> str:
    """The `[[approval.rules]]` table's text (JSON strings are valid TOML basic strings)."""
    lines = [
        "[[approval.rules]]",
        f"tool = {json.dumps(tool)}",
        f"match = {json.dumps(match)}",
        f"decision = {json.dumps(decision)}",
    ]
    if examples:
        lines.append(f"should_match = {json.dumps(list(examples))}")
    return "\n".join(lines) + "\n"


def append_rule(path: Path, table: str) -> None:
    """Append `table` to the config file at `path` (ConfigError if that would break it)."""
    try:
        before = path.read_bytes()
    except FileNotFoundError:
        before = b""
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc}") from None
    gap = b"" if not before else b"\n" if before.endswith(b"\n") else b"\n\n"
    after = before + gap + table.encode("utf-8")
    try:
        data = tomllib.loads(after.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"cannot add the rule to {path}: it would not read ({exc})") from None
    problems: list[str] = []
    rules = data.get("approval", {}).get("rules", [])
    check_rules(rules if isinstance(rules, list) else [], str(path), problems)
    if problems:
        raise ConfigError(*problems)
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o777 if before else 0o600
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(after)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temp, mode)
        os.replace(temp, path)
    except OSError as exc:
        Path(temp).unlink(missing_ok=True)
        raise ConfigError(f"cannot write config file {path}: {exc}") from None
