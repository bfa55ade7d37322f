"""A command's words read against program_table.py: which program (and subcommand) runs, and
whether one of its words is an operand the program reads as data.

Fail closed: a program not in the table, a word just after one that is not literal or an
option word it does not know (it may be that option's value: `$x` may be `-o`), the
command's name or subcommand, sed's script: none of these is data.
"""

from __future__ import annotations

from collections.abc import Sequence

from agentcli.policy.bash.program_table import DATA, PROGRAMS, SCRIPT, Program
from agentcli.policy.bash.wrappers import basename

_SCRIPT_OPTIONS = ("-e", "-f", "--expression", "--file")
SYSTEM_DIRS = ("/bin/", "/usr/bin/", "/usr/local/bin/", "/sbin/", "/usr/sbin/")


def program(words: Sequence[str | None]) -> tuple[Program | None, int]:
    """The table's entry for the command `words` and how many words name it (`git status`
    is 2), or (None, 0) for a program the table does not know."""
    if not words or words[0] is None:
        return None, 0
    if "/" in words[0] and not words[0].startswith(SYSTEM_DIRS):
        return None, 0  # `./cat` is the workspace's own program, not cat
    entry = PROGRAMS.get(basename(words[0]))
    if entry is None:
        return None, 0
    if entry.subcommands:
        sub = words[1] if len(words) > 1 else None
        if sub is None or sub not in entry.subcommands:
            return entry, 1  # global options, or a subcommand it does not know
        return entry.subcommands[sub], 2
    return entry, 1


def data_operand(words: Sequence[str | None], at: int) -> bool:
    """Whether the program reads `words[at]` as data: an operand (not an option, not an
    option's value) of a program whose operands are data."""
    entry, start = program(words)
    if entry is None or at < start or entry.operands not in (DATA, SCRIPT):
        return False
    if entry.subcommands and start == 1:  # `git -C x status`: options before the subcommand
        return False
    word, before = words[at], words[start:at]
    if word is None or word.startswith("-"):
        return False
    if before and entry.values and (before[-1] is None or not _no_value(before[-1], entry)):
        return False  # it may be the value of that option (`$x` may be `-o`)
    if entry.operands == SCRIPT:  # sed: a script option before it, or it is the script
        return any(_script_option(w) for w in before if w is not None)
    return True


def _no_value(option: str, entry: Program) -> bool:
    """Whether the word (an option or not) takes no value from the next word."""
    if not option.startswith("-") or option == "--" or option in entry.words:
        return True
    if option.startswith("--"):
        return "=" in option  # `--name=value`: its value is attached
    return all(letter in entry.flags for letter in option[1:])


def _script_option(word: str) -> bool:
    if word.startswith("--"):
        return word.split("=", 1)[0] in _SCRIPT_OPTIONS
    if not word.startswith("-") or word == "-":
        return False
    for letter in word[1:]:  # `-ne p`: flags, then e with its value; `-ie` is -i with the
        if letter in "ef":  # suffix `e` (i is no flag here), and its operand is the script
            return True
        if letter not in PROGRAMS["sed"].flags:
            return False
    return False
