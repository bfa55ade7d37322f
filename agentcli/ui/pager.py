"""The whole of a call in the person's pager: what the review panel cannot fit; and the
whole of a tool result the chat folded (`/show N`).

The text is the review panel itself (or the result), rendered whole
(agentcli/ui/call_panel.py: every unsafe character a mark), so nothing in it can
drive the terminal through the pager either. It
carries colour (SGR codes of agentcli's own, nothing else) only for `less -R`, the one
pager known to show them as colour; any other pager gets plain text.
"""

from __future__ import annotations

import io
import os
import shlex
import signal
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from agentcli_tools.plurals import counted
from rich.console import Console, Group, RenderableType
from rich.text import Text

from agentcli.events import ToolResult
from agentcli.ui.call_panel import call_panel
from agentcli.ui.call_preview import preview
from agentcli.ui.outcome_mark import outcome_mark, outcome_style
from agentcli.ui.safe_text import safe_line, styled

DEFAULT_PAGER = "less -R"


def pager_command() -> list[str]:
    """$PAGER split as a shell would (ValueError on unbalanced quotes), else less -R."""
    return shlex.split(os.environ.get("PAGER", "").strip() or DEFAULT_PAGER)


def shows_colour(command: list[str]) -> bool:
    """Whether the pager is less with -R (raw colour codes shown as colour)."""
    if not command or os.path.basename(command[0]) != "less":
        return False
    for arg in command[1:]:
        if arg == "--RAW-CONTROL-CHARS":
            return True
        if arg.startswith("-") and not arg.startswith("--") and "R" in arg[1:]:
            return True
    return False


def whole_call(
    name: str, args: Any, workspace: Path | None, description: str, width: int, colour: bool
) -> str:
    """The call's review panel with nothing left out (the whole diff), as text."""
    shown = preview(name, args, workspace, limit=None)
    return rendered(call_panel(name, shown, 1, 1, description), width, colour)


def rendered(what: RenderableType, width: int, colour: bool) -> str:
    """`what` as the pager gets it: lines `width` wide, colour codes only if `colour`."""
    buffer = io.StringIO()
    console = Console(
        file=buffer,
        width=width,
        force_terminal=colour,
        color_system="standard" if colour else None,
        no_color=not colour,
        highlight=False,
        emoji=False,
        markup=False,
    )
    console.print(what)
    return buffer.getvalue()


def page(console: Console, name: str, args: Any, workspace: Path | None, description: str) -> None:
    """Show the whole call in $PAGER and return when the person leaves it."""
    page_calls(console, [(name, args, description)], workspace)


def page_calls(console: Console, calls: list[tuple[str, Any, str]], workspace: Path | None) -> None:
    """Show whole calls (name, arguments, description), one after the other, in $PAGER."""
    page_with(
        console,
        lambda colour: "".join(
            whole_call(name, args, workspace, description, console.width, colour)
            for name, args, description in calls
        ),
    )


def page_result(console: Console, result: ToolResult) -> None:
    """A tool result whole in $PAGER: what its fold in the chat left out (every unsafe
    character a mark, tabs as layout, as the fold shows its lines)."""
    lines = result.content.removesuffix("\n").split("\n")  # not splitlines: \r is shown
    head = outcome_mark(result.status)
    head.append(" ")
    head.append_text(safe_line(result.name, outcome_style(result.status)))
    head.append(f" ({counted(len(lines), 'line')})", style="dim")
    body = Text("\n").join(safe_line(line, tabs=True) for line in lines)
    page_with(console, lambda colour: rendered(Group(head, body), console.width, colour))


def page_with(console: Console, text_for: Callable[[bool], str]) -> None:
    """Run $PAGER on the text `text_for(colour)` makes, in colour if the pager shows it."""
    try:
        command = pager_command()
    except ValueError as exc:
        console.print(styled(("cannot read $PAGER: ", "red"), str(exc)))
        return
    text = text_for(shows_colour(command) and not console.no_color)
    try:
        with _no_sigint():  # Ctrl-C is the pager's (less ignores it), not ours
            subprocess.run(command, input=text.encode("utf-8"), check=False)
    except OSError as exc:
        console.print(styled((f"cannot run pager {shlex.join(command)!r}: ", "red"), str(exc)))
        console.print(Text("set $PAGER to a pager, e.g. PAGER='less -R'", style="dim"))


@contextmanager
def _no_sigint() -> Iterator[None]:
    try:
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:  # not the main thread: nothing to change
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
