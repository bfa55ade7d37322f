"""Durations in the config, written as people write them: "90s", "30m", "24h", "7d"."""

from __future__ import annotations

import re

UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
DURATION = 'a duration like "90s", "30m", "24h" or "7d"'
_FORM = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([smhd])\s*")


def parse_duration(text: str) -> float:
    """Seconds in `text`, a positive number and one unit (s, m, h, d); ValueError if not."""
    match = _FORM.fullmatch(text) if isinstance(text, str) else None
    if match is None:
        raise ValueError(f"expected {DURATION}")
    seconds = float(match.group(1)) * UNITS[match.group(2)]
    if seconds <= 0:
        raise ValueError(f"expected {DURATION}, more than zero")
    return seconds


def say_duration(seconds: float) -> str:
    """Seconds as a person reads them: "45s", "12m", "3h 5m", "2d 4h"."""
    seconds = max(0, int(seconds))
    for unit, size, smaller, small_size in (("d", 86400, "h", 3600), ("h", 3600, "m", 60)):
        if seconds >= size:
            rest = (seconds % size) // small_size
            return f"{seconds // size}{unit}" + (f" {rest}{smaller}" if rest else "")
    return f"{seconds // 60}m" if seconds >= 60 else f"{seconds}s"
