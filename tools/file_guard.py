"""What every file tool does before it opens a path: the rules checked again where it led.

Every path goes through tools/paths.py `locate` (a walk beneath the workspace that follows no
link blindly) and every read or write through tools/fileio.py (descriptors, never the path).
Where the walk led is checked against the person's deny and ask rules again
(`ToolContext.protection`) before anything is opened: the review resolved the path earlier, and
a link may have changed since.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from .context import ToolContext
from .errors import ToolError
from .paths import Located
from .plurals import counted
from .typed_paths import typed_relative


def guard(context: ToolContext, tool: str, path: str) -> Callable[[Located], None]:
    """The check ``locate`` runs on where ``path`` led: refused when the person's rules
    protect it and the review did not apply them to this call (tools.context)."""

    def check(found: Located) -> None:
        typed = typed_relative(context.workspace, path)
        if refusal := context.protection(tool, found.rel, typed):
            raise ToolError(
                f"'{path}' leads to '{found.rel}', which the approval rules protect "
                f"({refusal}): {tool} does not open it"
            )

    return check


def interrupted(tool: str) -> ToolError:
    return ToolError(f"{tool} stopped: the person interrupted the run")


def binary_error(shown: str, info: os.stat_result) -> ToolError:
    size = info.st_size
    return ToolError(
        f"'{shown}' is a binary file ({counted(size, 'byte')}); only text files can be read"
    )
