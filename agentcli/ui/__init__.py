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
    set (Rich alone would still write bold and dim); it does too when not a terminal, and
    then never wraps or cuts a line: the reader is a script or a log, not a screen.

    It does not make text safe: untrusted text goes through agentcli.ui.safe_text (or
    agentcli.terminal_text) first, and is never parsed as markup."""
    from rich.console import Console

    plain = bool(os.environ.get("NO_COLOR"))
    console = Console(
        stderr=stderr,
        highlight=False,
        emoji=False,  # `:name:` in untrusted text stays as typed
        color_system=None if plain else "auto",
        **options,
    )
    if not console.is_terminal:  # a pipe or a log: each line whole, never wrapped or cut at
        console.soft_wrap = True  # Rich's assumed 80 columns (a command must stay copyable)
    return console
