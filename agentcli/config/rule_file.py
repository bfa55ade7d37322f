"""Writing a rule into the config file: `A` at a review can make its rule permanent.

The rule is appended as a `[[approval.rules]]` table; what the file held before is kept byte
for byte. The new text is checked first (it must still be valid TOML and its rules must pass
their checks, the new rule's examples included), then written atomically
(config/config_write.py). A missing file (and its folder) is created.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

from agentcli.config.checks import check_rules
from agentcli.config.config_write import read_config, write_config
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
    before = read_config(path)
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
    write_config(path, before, after)
