"""Rich rendering and the terminal review prompt. Only the CLI imports this package."""

from __future__ import annotations

import os
from typing import Any

from rich.console import Console


def make_console(stderr: bool = False, **options: Any) -> Console:
    """A console that writes plain text, with no control codes at all, when NO_COLOR is
    set (Rich alone would still write bold and dim); it does too when not a terminal."""
    plain = bool(os.environ.get("NO_COLOR"))
    return Console(
        stderr=stderr, highlight=False, color_system=None if plain else "auto", **options
    )
