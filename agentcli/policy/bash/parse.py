"""What a bash command line runs, read with a real bash grammar (tree-sitter-bash).

`analyse(line)` answers two questions for the approval rules:

- `simple`: when the whole line is plain simple commands made of literal words, joined only by
  `;`, `&&`, `||`, `|` and newlines, the words of each command exactly as bash passes them;
  otherwise None, with `reason` saying what stopped it. Allow rules only ever match this.
- `commands`: every command found anywhere in the line (inside substitutions, groups,
  functions, control flow, here-docs, `sh -c` and `eval` strings parsed again, behind
  wrappers such as `sudo` or `env`), each as its words with `None` for a word that is not
  literal. A command that cannot be known at all (`$cmd`, `eval "$x"`, `bash script`) is
  `(None,)`. Deny and ask rules look at all of these.

Fail closed: anything this module does not understand word for word is not literal. The parser
is imported on first use only, so the quick commands never load it.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from agentcli.policy.bash import code_arguments, plain_commands, unread_parts, wrappers
from agentcli.policy.bash.words import WORD_TYPES, text, word_value

Words = tuple[str | None, ...]
UNKNOWN: Words = (None,)
MAX_DEPTH = 8  # `sh -c` inside `eval` inside ...: deeper than this is unknown

MAX_LENGTH = 100_000  # characters; a longer line is not read (parsing costs time in its length)
_CONTINUATION = re.compile(r"\\\r?\n")


@dataclass(frozen=True)
class Command:
    """One command found in the line: its words (None: not literal) and how it was reached."""

    words: Words
    via: str = ""  # "" at the top; "sudo", "sh -c", "eval", ...; for unknown ones, why

    @property
    def known(self) -> bool:
        return bool(self.words) and self.words[0] is not None

    def __str__(self) -> str:
        text = " ".join("<?>" if w is None else _quote(w) for w in self.words)
        return f"{text}  [{self.via}]" if self.via else text


@dataclass(frozen=True)
class Analysis:
    line: str
    commands: tuple[Command, ...]
    simple: tuple[tuple[str, ...], ...] | None
    reason: str = ""  # why `simple` is None


def _quote(word: str) -> str:
    import shlex

    return shlex.quote(word)


_lock = threading.Lock()
_parser: Any = None


def _parse(source: bytes) -> Any:
    global _parser
    with _lock:  # a tree-sitter Parser is not safe to share between threads
        if _parser is None:
            import tree_sitter
            import tree_sitter_bash

            _parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))
        return _parser.parse(source)


def syntax_tree(source: bytes) -> Any:
    """The tree-sitter-bash tree of `source` (result_slots.py reads it as it is)."""
    return _parse(source)


@lru_cache(maxsize=512)
def analyse(line: str) -> Analysis:
    try:
        return _analyse(line, 0)
    except RecursionError:  # nested deeper than Python's stack: nothing is known
        why = "nested too deep to read"
        return Analysis(line, (Command(UNKNOWN, why),), None, why)


def _analyse(line: str, depth: int) -> Analysis:
    if len(line) > MAX_LENGTH:
        return _unknown(line, f"longer than {MAX_LENGTH:,} characters")
    try:
        source = line.encode("utf-8")
    except UnicodeEncodeError:
        return _unknown(line, "not valid UTF-8")
    if "\0" in line or depth > MAX_DEPTH:
        return _unknown(line, "a NUL byte" if "\0" in line else "nested too deep")
    root = _parse(source).root_node
    found: list[Command] = []
    if variable := code_arguments.CODE_VARIABLES.search(line):
        found.append(Command(UNKNOWN, f"{variable.group(1)} can make bash run other code"))
    if _CONTINUATION.search(line):
        # bash drops backslash-newline almost everywhere (not inside '...'), so `r\<newline>m`
        # is `rm`; the parser does not always agree. Read it both ways, and ask anyway.
        found.append(Command(UNKNOWN, "a line continuation (backslash-newline)"))
        found.extend(_analyse(_CONTINUATION.sub("", line), depth + 1).commands)
    # Which body belongs to which here-doc is only sure when there is one.
    context = unread_parts.Context(literal=source.count(b"<<") - source.count(b"<<<") <= 1)
    _collect(root, source, depth, found, context)
    simple: list[tuple[str, ...]] = []
    reason = plain_commands.plain(root, source, simple)
    return Analysis(line, tuple(found), None if reason else tuple(simple), reason)


def _unknown(line: str, why: str) -> Analysis:
    return Analysis(line, (Command(UNKNOWN, why),), None, why)


# -- deny and ask: every command anywhere --------------------------------------------------------


def _collect(
    node: Any, source: bytes, depth: int, found: list[Command], context: unread_parts.Context
) -> None:
    kind = node.type
    if kind == "ERROR" or node.is_missing:
        found.append(Command(UNKNOWN, "a syntax error: bash may read this part differently"))
    elif why := unread_parts.reason(node, source, context):
        found.append(Command(UNKNOWN, why))
    if kind in ("command", "unset_command"):
        found.extend(expand(_command_words(node, source), "", depth))
    elif kind == "declaration_command":
        words, checked = _declaration(node, source)
        found.append(Command(words))
        if why := code_arguments.reason(checked):
            found.append(Command(UNKNOWN, why))
    inside = context.inside(node)
    for child in node.children:
        _collect(child, source, depth, found, inside)


def _command_words(node: Any, source: bytes) -> Words:
    words: list[str | None] = []
    end = -1
    for child in node.children:
        if child.type in ("variable_assignment", "file_redirect", "herestring_redirect"):
            end = -1
            continue
        target = child.children[0] if child.type == "command_name" else child
        ok = target.type in WORD_TYPES and (child.type != "command_name" or child.child_count == 1)
        value = word_value(target, source) if ok else None  # None: not literal, or unknown here
        if target.type in ("unset", "unsetenv", "variable_name"):  # unset_command's words
            value = text(target, source)
        if child.start_byte == end and words:  # the parser split one bash word in two
            words[-1] = None if words[-1] is None or value is None else words[-1] + value
        else:
            words.append(value)
        end = child.end_byte
    return tuple(words) or UNKNOWN


def _declaration(node: Any, source: bytes) -> tuple[Words, Words]:
    """`declare`/`export`/...: its words for matching, and the words its checks read. An
    assignment whose value is not literal is None, except that `export NAME=$x` (which never
    evaluates anything) is checked as `NAME=`."""
    words: list[str | None] = []
    checked: list[str | None] = []
    keyword = text(node.children[0], source) if node.children else ""
    for child in node.children:
        value = word_value(child, source) if child.type in WORD_TYPES else None
        if child is node.children[0] or child.type == "variable_name":
            value = text(child, source)
        elif child.type == "variable_assignment":
            name, _, rest = text(child, source).partition("=")
            values = child.children[2:]
            literal = [word_value(v, source) if v.type in WORD_TYPES else None for v in values]
            if not values:
                value = name + "="
            elif len(values) == 1 and literal[0] is not None:
                value = f"{name}={literal[0]}"
            elif keyword == "export" and "[" not in name:
                checked.append(name + "=")
                words.append(None)
                continue
        words.append(value)
        checked.append(value)
    return tuple(words) or UNKNOWN, tuple(checked) or UNKNOWN


def expand(words: Words, via: str, depth: int) -> list[Command]:
    """The command itself, then whatever it runs: a wrapper's command or a string run as bash."""
    if not words or words[0] is None:
        return [Command(UNKNOWN, via or "the command name is not literal")]
    if words[0] in plain_commands.RESERVED - {
        "time",
        "coproc",
    }:  # both run the next words (wrappers)
        # `time if ...`, `! if ...`: the parser took a keyword for a command name
        return [Command(UNKNOWN, f"the reserved word {words[0]!r} where a command should be")]
    found = [Command(words, via)]
    if why := code_arguments.reason(words):
        found.append(Command(UNKNOWN, why))
    if depth > MAX_DEPTH:
        return [*found, Command(UNKNOWN, "nested too deep")]
    inner = wrappers.inner(words)
    if inner is None:
        return found
    name = wrappers.basename(words[0])
    if inner.unknown:
        found.append(Command(UNKNOWN, f"{name}: {inner.unknown}"))
    for script in inner.scripts:
        inside = _analyse(script, depth + 1).commands
        found.extend(Command(c.words, c.via or f"{name} string") for c in inside)
    for command in inner.commands:
        found.extend(expand(command, via or name, depth + 1))
    return found
