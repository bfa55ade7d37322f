"""Shell rule patterns against what `bash/parse.py` found in a command line.

A pattern is an fnmatch glob over a command's words, each written in shell quoting
(`shlex.quote`: `echo 'a b'`, plain words as they are). That text is unambiguous: it reads back
as exactly the words bash passes, so `echo *` cannot be met by a first word `'echo x'`, and a
quote or `;` inside a word is visibly inside quotes.

- allow: the line must be plain (parse.py `simple`) and every one of its commands must match.
- deny and ask: "yes" when some command surely matches; "maybe" when a command with words that
  are not literal (or an unknown command) could match for some value of those words; "no"
  otherwise. Deny and ask also try the words joined with plain spaces, and the command name's
  basename (`/bin/rm` is `rm`), which can only make them match more.
"""

from __future__ import annotations

import fnmatch
import shlex
from typing import Literal

from agentcli.policy.bash.parse import Command, analyse
from agentcli.policy.bash.wrappers import basename

Match = Literal["yes", "maybe", "no"]
HOLE = None  # in a template: any text at all


def simple_commands(line: str) -> list[str] | None:
    """The line's simple commands in shell quoting, or None when the line is not plain."""
    simple = analyse(line).simple
    return None if simple is None else [" ".join(shlex.quote(w) for w in c) for c in simple]


def finds(line: str, pattern: str) -> Match:
    """Does some command anywhere in the line match a deny or ask pattern?"""
    result: Match = "no"
    for command in analyse(line).commands:
        for template in _templates(command):
            if all(isinstance(t, str) for t in template):
                if fnmatch.fnmatchcase("".join(t for t in template if t), pattern):
                    return "yes"
            elif _always(pattern, template):
                return "yes"  # e.g. `rm -f $x` and `rm *`: whatever $x is
            elif result == "no" and globs_meet(pattern, template):
                result = "maybe"
    return result


def _always(pattern: str, template: list[str | None]) -> bool:
    """Does the pattern match with a few very different values in the holes?

    Only a hint: "yes" denies where "maybe" would ask a person; both stop the command.
    """
    return all(
        fnmatch.fnmatchcase("".join(probe if t is HOLE else t for t in template), pattern)
        for probe in ("", "x", "'a b'", "; -")
    )


def _templates(command: Command) -> list[list[str | None]]:
    variants = [command.words]
    name = command.words[0]
    if name is not None and basename(name) not in (name, ""):
        variants.append((basename(name), *command.words[1:]))
    templates = []
    for words in variants:
        for quote in (shlex.quote, str):
            template: list[str | None] = []
            for at, word in enumerate(words):
                if at:
                    template.append(" ")
                template.extend([HOLE] if word is None else list(quote(word)))
            templates.append(template)
    return templates


def globs_meet(pattern: str, template: list[str | None]) -> bool:
    """Is there a string that the fnmatch `pattern` matches and the template can be?

    The template is characters and holes (any text). Both are automata whose only loops are
    `*` and holes, so a search over (pattern position, template position) pairs decides it.
    """
    tokens = _tokens(pattern)
    end = (len(tokens), len(template))
    seen: set[tuple[int, int]] = set()
    todo = [(0, 0)]
    while todo:
        state = todo.pop()
        if state in seen:
            continue
        seen.add(state)
        if state == end:
            return True
        i, j = state
        token = tokens[i] if i < len(tokens) else None
        piece = template[j] if j < len(template) else ""
        if token == "*":
            todo.append((i + 1, j))
        if j < len(template) and piece is HOLE:
            todo.append((i, j + 1))
        if j < len(template) and piece is not HOLE:  # a template character
            if token == "*":
                todo.append((i, j + 1))
            elif token is not None and fnmatch.fnmatchcase(piece, token):
                todo.append((i + 1, j + 1))
        elif piece is HOLE and token is not None and token != "*":
            todo.append((i + 1, j))  # the hole supplies a character this token accepts
    return False


def _tokens(pattern: str) -> list[str]:
    """fnmatch's pattern as tokens: "*", or a pattern for exactly one character."""
    tokens: list[str] = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "*":
            if not tokens or tokens[-1] != "*":
                tokens.append("*")
        elif char == "[":
            end = _class_end(pattern, i)
            tokens.append(pattern[i:end] if end else "[[]")
            i = (end or i + 1) - 1
        elif char == "?":
            tokens.append("?")
        else:
            tokens.append("[[]" if char == "[" else char)
        i += 1
    return tokens


def _class_end(pattern: str, start: int) -> int:
    """Where fnmatch's `[...]` starting at `start` ends (after `]`), 0 if it is a plain `[`."""
    j = start + 1
    if j < len(pattern) and pattern[j] == "!":
        j += 1
    if j < len(pattern) and pattern[j] == "]":
        j += 1
    while j < len(pattern) and pattern[j] != "]":
        j += 1
    return j + 1 if j < len(pattern) else 0
