"""Rich rendering and the terminal review prompt. Only the CLI imports this package.

Importing the package is cheap: Rich loads when the first console is made, so commands
that print plain text (`--help`, `tools`, JSON output) never pay for it.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console


def make_console(stderr: bool = False, **options: Any) -> Console:
    """A console that writes plain text, with no control codes at all, when NO_COLOR is
    set (Rich alone would still write bold and dim); it does too when not a terminal.

    It does not make text safe: untrusted text goes through agentcli.ui.safe (or
    agentcli.visible) first, and is never parsed as markup."""
    from rich.console import Console

    plain = bool(os.environ.get("NO_COLOR"))
    return Console(
        stderr=stderr,
        highlight=False,
        emoji=False,  # `:name:` in untrusted text stays as typed
        color_system=None if plain else "auto",
        **options,
    )
