"""Where a shell command may take another task's result (plan mode's `$N`): only inside a
plain argument word of a simple command, as bash reads it (tree-sitter-bash), that the
program reads as data (program_arguments.py).

The result goes in as one single-quoted word (agent/plan/substitution.py). That keeps it
data only where the word stands unquoted at the top of a command's arguments: inside double
quotes a single quote is an ordinary character, so `$(...)` in the result would run; in a
here-document, backticks, `[[ ]]`, `(( ))`, `declare -i` or `let` bash reads it as code or
arithmetic (`a[$(cmd)]`); as a command name or a redirection target it chooses what runs or
where it writes. And the program decides the rest: `sed -n $1` runs a result `1e cmd`,
`make $1` one `X=$(shell cmd)`, `sqlite3 db $1` one `.shell cmd`, `sort -o $1` writes where
it says; an unknown program's arguments may be anything. So the word must be an operand of a
program program_table.py knows reads its operands as data (not its name, subcommand, or an
option's value), else the reference is refused before anyone reviews the plan. Once the
result is in, `option_like` refuses a word the result made start with `-` (`sort $1` with
`-oFILE`): a person must see that value; and `same_commands` checks that bash finds the
commands the template had, with the result where the reference stood and nowhere else.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Mapping
from typing import Any

from agentcli.policy.bash.parse import analyse, syntax_tree
from agentcli.policy.bash.program_arguments import data_operand, program
from agentcli.policy.bash.program_table import DATA
from agentcli.policy.bash.words import WORD_TYPES, text, word_value

_SKIPPED = {"variable_assignment", "file_redirect", "heredoc_redirect", "herestring_redirect"}
_CARRIES_OUTPUT = {"command_substitution", "process_substitution", "function_definition"}


def misplaced(line: str, markers: Iterable[str]) -> str | None:
    """Why a marker in `line` (a command with each reference replaced by a marker, a plain
    word of letters and digits) is not only inside plain argument words, or None."""
    wanted = [m for m in markers if m in line]
    if not wanted:
        return None
    source = line.encode("utf-8")
    root = syntax_tree(source).root_node
    if _has(root, "process_substitution"):  # `exec > >(sh)` sends later output to a shell
        return wanted[0]
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
    """Whether `word` is an argument of a simple command that its program reads as data, and
    whose output no other command reads as code."""
    command = word.parent
    if command is None or command.type != "command" or _output_read_as_code(command, source):
        return False
    words, at = _command_words(command, source, word)
    return at > 0 and data_operand(words, at)


def _command_words(command: Any, source: bytes, word: Any = None) -> tuple[list[str | None], int]:
    """The command's words as bash passes them (None: not literal), and where `word` is."""
    words: list[str | None] = []
    at = -1
    for child in command.children:
        if child.type in _SKIPPED:
            continue
        if child.type == "command_name":
            name = child.children[0] if child.child_count == 1 else None
            words.append(word_value(name, source) if name is not None else None)
            continue
        if word is not None and (child.start_byte, child.end_byte) == (
            word.start_byte,
            word.end_byte,
        ):
            at = len(words)
        words.append(word_value(child, source) if child.type in WORD_TYPES else None)
    return words, at


def _output_read_as_code(command: Any, source: bytes) -> bool:
    """Whether what the command prints may reach a command that reads it as code: it stands
    in a substitution (`bash -c "$(echo $1)"`, backticks, `<(...)`) or a function (called
    anywhere), or it, or a group or loop around it, is piped to a later part that is not a
    program reading data (`echo $1 | sh`, `( echo $1 ) | sqlite3`, `| sed -f -`)."""
    node = command
    while node.parent is not None:
        parent = node.parent
        if parent.type in _CARRIES_OUTPUT:
            return True
        if parent.type == "pipeline":
            stages = [c for c in parent.children if c.is_named]
            spans = [(c.start_byte, c.end_byte) for c in stages]
            for part in stages[spans.index((node.start_byte, node.end_byte)) + 1 :]:
                if part.type == "redirected_statement" and part.named_children:
                    part = part.named_children[0]
                if part.type != "command":
                    return True
                entry, _ = program(_command_words(part, source)[0])
                if entry is None or entry.operands != DATA:
                    return True
        node = parent
    return False


def _has(node: Any, kind: str) -> bool:
    return node.type == kind or any(_has(child, kind) for child in node.children)


def option_like(marked: str, values: Mapping[str, str]) -> str | None:
    """The first word that, with the results in, starts with `-` where the template's word
    did not: the program may read it as an option (`-oFILE`, `--output=FILE`), or None."""
    for command in analyse(marked).commands:
        for word in command.words[1:]:
            if word is None or word.startswith("-"):
                continue
            put = _put(word, values)
            if put is not None and put.startswith("-"):
                return put
    return None


def leaves_folder(marked: str, values: Mapping[str, str]) -> str | None:
    """The first word whose template names a folder before a result (`notes/$1`) and whose
    result has a `..` that leaves it (`../keep.txt`), as file tools refuse, or None."""
    for command in analyse(marked).commands:
        for word in command.words[1:]:
            at = _first_marker(word, values)
            if word is None or at < 0 or "/" not in word[:at]:
                continue
            folder = posixpath.normpath(posixpath.dirname(word[:at]) or ".")
            put = posixpath.normpath(_put(word, values) or "")
            if put != folder and not put.startswith(folder.rstrip("/") + "/"):
                return _put(word, values)
    return None


def _first_marker(word: str | None, values: Mapping[str, str]) -> int:
    found = [word.find(marker) for marker in values if word and marker in word]
    return min(found) if found else -1


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
