"""Where a shell command may take another task's result (plan mode's `$N`): only inside a
plain argument word of a simple command, as bash reads it (tree-sitter-bash).

The result goes in as one single-quoted word (agent/plan/substitution.py). That keeps it
data only where the word stands unquoted at the top of a command's arguments: inside double
quotes a single quote is an ordinary character, so `$(...)` in the result would run; in a
here-document, backticks, `[[ ]]`, `(( ))`, `declare -i` or `let` bash reads it as code or
arithmetic (`a[$(cmd)]`); as a command name or a redirection target it chooses what runs or
where it writes. And a command that runs its arguments as code (`eval`, `sh -c`, `python`,
`sudo`, `xargs`, ...) would run the result whatever its quoting. So a reference is refused
anywhere else, before anyone reviews the plan; `same_commands` checks again, once the
result is in, that bash finds the commands the template had, with the result where the
reference stood and nowhere else.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from agentcli.policy.allow_all import INTERPRETERS
from agentcli.policy.bash.parse import analyse, syntax_tree
from agentcli.policy.bash.words import text

# commands that read their arguments as code, names or arithmetic, beside the interpreters
# and wrappers allow_all.py knows
RUNS_ARGUMENTS = {
    *INTERPRETERS,
    *("source", ".", "let", "trap", "alias", "declare", "typeset", "local", "export"),
    *("readonly", "unset", "read", "mapfile", "readarray", "getopts", "enable", "complete"),
    *("compgen", "bind", "fc"),
}


def misplaced(line: str, markers: Iterable[str]) -> str | None:
    """Why a marker in `line` (a command with each reference replaced by a marker, a plain
    word of letters and digits) is not only inside plain argument words, or None."""
    wanted = [m for m in markers if m in line]
    if not wanted:
        return None
    source = line.encode("utf-8")
    root = syntax_tree(source).root_node
    placed = {marker: 0 for marker in wanted}
    stack: list[Any] = [root]
    while stack:
        node = stack.pop()
        if node.type == "ERROR" or node.is_missing:
            return "the command is not valid bash"
        if node.type == "word" and _an_argument(node, source):
            for marker in wanted:
                placed[marker] += text(node, source).count(marker)
        stack.extend(node.children)
    for marker in wanted:
        if placed[marker] != line.count(marker):
            return marker
    return None


def _an_argument(word: Any, source: bytes) -> bool:
    """Whether `word` is an argument of a simple command (not its name) that does not run
    its arguments as code."""
    command = word.parent
    if command is None or command.type != "command":
        return False
    outer = command.parent
    while outer is not None:  # in backticks bash finds the closing ` before any quoting
        if outer.type == "command_substitution" and text(outer, source).startswith("`"):
            return False
        outer = outer.parent
    name = next((c for c in command.children if c.type == "command_name"), None)
    if name is None or name.child_count != 1 or name.children[0].type != "word":
        return False  # no name, or one bash expands: unknown
    program = text(name.children[0], source).rsplit("/", 1)[-1]
    if program == "printf":  # `printf -v NAME`: a name bash evaluates (`a[$(cmd)]`)
        return not any(text(c, source) == "-v" for c in command.children)
    return program not in RUNS_ARGUMENTS


def same_commands(marked: str, ran: str, values: Mapping[str, str]) -> bool:
    """Whether bash finds in `ran` the commands it finds in `marked`, each marker's value
    where the marker stood: the result added no command and changed no word but its own."""
    expected = [
        tuple(_put(word, values) for word in command.words) for command in analyse(marked).commands
    ]
    found = [command.words for command in analyse(ran).commands]
    return found == expected


def _put(word: str | None, values: Mapping[str, str]) -> str | None:
    if word is None:
        return None
    for marker, value in values.items():
        word = word.replace(marker, value)
    return word
