"""Command lines that only read: nothing they run can change a file, so undo has nothing to
take back and the review has no "cannot be undone" to say about them.

A line only reads when it is plain (agentcli/policy/bash/plain_commands.py: literal simple
commands joined by `;`, `&&`, `||`, `|`, no redirection, no expansion) and every command in
it is a program of program_table.py that neither runs code nor writes a file, named by its
bare name (not a path: `./ls` may be anything). Anything else, as always, fails closed.
"""

from __future__ import annotations

from agentcli.policy.bash.parse import analyse
from agentcli.policy.bash.program_table import PROGRAMS


def only_reads(command: str) -> bool:
    """Whether every command of `command` is known to read and print, never to write."""
    simple = analyse(command).simple
    if not simple:
        return False
    for words in simple:
        name = words[0] if words else ""
        program = PROGRAMS.get(name) if name and "/" not in name else None
        if program is None or program.runs or program.writes or program.subcommands:
            return False
    return True
