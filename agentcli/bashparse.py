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

from agentcli import wrappers

Words = tuple[str | None, ...]
UNKNOWN: Words = (None,)
MAX_DEPTH = 8  # `sh -c` inside `eval` inside ...: deeper than this is unknown

# Unquoted characters that mean nothing to bash inside a word (no glob, tilde, brace, comment,
# history or expansion); anything else outside quotes makes the word not literal.
_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./,:=+@%")
_WORD_TYPES = {"word", "number", "string", "raw_string", "concatenation"}
_PLAIN_JOINS = {";", "&&", "||", "|"}
_RESERVED = {
    "if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while", "until",
    "do", "done", "in", "function", "time", "coproc", "{", "}", "!", "[[", "]]",
}  # fmt: skip
# Variables that make bash (or the loader) run code from elsewhere: `BASH_ENV=f bash -c true`
# runs the file f. A line that names one is not fully known.
_CODE_VARIABLES = re.compile(
    r"\b(BASH_ENV|ENV|SHELLOPTS|BASHOPTS|PS4|PROMPT_COMMAND|LD_PRELOAD|LD_AUDIT|"
    r"LD_LIBRARY_PATH|BASH_LOADABLES_PATH|BASH_FUNC_\w*)\b"
)
_CONTINUATION = re.compile(r"\\\r?\n")
_ARITHMETIC_TEST = re.compile(r"\s-(eq|ne|lt|le|gt|ge)\s")


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

    @property
    def fully_known(self) -> bool:
        return all(c.known for c in self.commands)


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


@lru_cache(maxsize=512)
def analyse(line: str) -> Analysis:
    try:
        return _analyse(line, 0)
    except RecursionError:  # nested deeper than Python's stack: nothing is known
        why = "nested too deep to read"
        return Analysis(line, (Command(UNKNOWN, why),), None, why)


def _analyse(line: str, depth: int) -> Analysis:
    try:
        source = line.encode("utf-8")
    except UnicodeEncodeError:
        return Analysis(line, (Command(UNKNOWN, "not valid UTF-8"),), None, "not valid UTF-8")
    if "\0" in line or depth > MAX_DEPTH:
        why = "a NUL byte" if "\0" in line else "nested too deep"
        return Analysis(line, (Command(UNKNOWN, why),), None, why)
    root = _parse(source).root_node
    found: list[Command] = []
    if variable := _CODE_VARIABLES.search(line):
        found.append(Command(UNKNOWN, f"{variable.group(1)} can make bash run other code"))
    if _CONTINUATION.search(line):
        # bash drops backslash-newline almost everywhere (not inside '...'), so `r\<newline>m`
        # is `rm`; the parser does not always agree. Read it both ways, and ask anyway.
        found.append(Command(UNKNOWN, "a line continuation (backslash-newline)"))
        found.extend(_analyse(_CONTINUATION.sub("", line), depth + 1).commands)
    _collect(root, source, depth, found)
    simple: list[tuple[str, ...]] = []
    reason = _plain(root, source, simple)
    return Analysis(line, tuple(found), None if reason else tuple(simple), reason)


# -- words ------------------------------------------------------------------------------------


def word_value(node: Any, source: bytes) -> str | None:
    """The literal value bash gives this word, or None when it expands, globs or is unclear."""
    text = source[node.start_byte : node.end_byte].decode("utf-8")
    kind = node.type
    if kind in ("word", "number"):
        return _unquoted(text)
    if kind == "raw_string":
        inner = text[1:-1]
        ok = len(text) >= 2 and text[0] == text[-1] == "'" and "'" not in inner
        return inner if ok else None
    if kind == "string":
        if any(c.type not in ('"', "string_content") for c in node.children):
            return None
        return _double_quoted(text)
    if kind == "concatenation":
        parts = []
        for left, right in zip(node.children, node.children[1:], strict=False):
            if left.end_byte != right.start_byte:
                return None  # tree-sitter joined what bash would split
        for child in node.children:
            value = word_value(child, source) if child.type in _WORD_TYPES else None
            if value is None:
                return None
            parts.append(value)
        return "".join(parts)
    return None


def _unquoted(text: str) -> str | None:
    out, chars = [], iter(text)
    for char in chars:
        if char == "\\":
            escaped = next(chars, "\n")
            if escaped == "\n":
                return None  # a line continuation or a trailing backslash
            out.append(escaped)
        elif char in _SAFE:
            out.append(char)
        else:
            return None
    return "".join(out) if out else None


def _double_quoted(text: str) -> str | None:
    if len(text) < 2 or text[0] != '"' or text[-1] != '"':
        return None
    out, chars = [], iter(text[1:-1])
    for char in chars:
        if char == "\\":
            escaped = next(chars, "")
            if escaped in ("", "\n"):
                return None
            out.append(escaped if escaped in '$`"\\' else "\\" + escaped)
        elif char in '$`"':
            return None
        else:
            out.append(char)
    return "".join(out)


# -- allow: the plain simple commands -----------------------------------------------------------


def _plain(root: Any, source: bytes, out: list[tuple[str, ...]]) -> str:
    """Fill `out` with the line's simple commands; return why the line is not plain, or ""."""
    if root.has_error or _has_missing(root):
        return "bash would not parse it the same way (a syntax error)"
    if reason := _gaps(root, source):
        return reason
    return _plain_list(root, source, out)


def _plain_list(node: Any, source: bytes, out: list[tuple[str, ...]]) -> str:
    for child in node.children:
        if child.type in ("list", "pipeline"):
            if reason := _plain_list(child, source, out):
                return reason
        elif child.type == "command":
            words = _plain_command(child, source)
            if isinstance(words, str):
                return words
            out.append(words)
        elif child.is_named or child.type not in _PLAIN_JOINS:
            return f"it has {_describe(child)}"
    return ""


def _plain_command(node: Any, source: bytes) -> tuple[str, ...] | str:
    words: list[str] = []
    for left, right in zip(node.children, node.children[1:], strict=False):
        if left.end_byte == right.start_byte:  # `'a b'\;` is one word to bash, two here
            return "words the parser split where bash does not"
    for child in node.children:
        target = child.children[0] if child.type == "command_name" else child
        if child.type == "command_name" and child.child_count != 1:
            return "a command name it cannot read"
        if target.type not in _WORD_TYPES:
            return f"it has {_describe(child)}"
        value = word_value(target, source)
        if value is None:
            text = source[target.start_byte : target.end_byte].decode("utf-8", "replace")
            return f"the word {text!r} is not literal (quoting, expansion or glob)"
        words.append(value)
    if not words or words[0] in _RESERVED:
        return "a reserved word as its command"
    return tuple(words)


def _gaps(root: Any, source: bytes) -> str:
    """Every byte between the parser's tokens must be a space, a tab or a newline."""
    position = 0
    for leaf in _leaves(root):
        if not _blank(source[position : leaf.start_byte]):
            return "characters the parser skipped (e.g. a line continuation or a carriage return)"
        position = max(position, leaf.end_byte)
    return "" if _blank(source[position:]) else "characters the parser skipped"


def _blank(gap: bytes) -> bool:
    return not gap.strip(b" \t\n")


def _leaves(node: Any) -> Any:
    if node.child_count == 0 or node.type in ("string", "raw_string", "word"):
        yield node
        return
    for child in node.children:
        yield from _leaves(child)


def _has_missing(node: Any) -> bool:
    return node.is_missing or any(_has_missing(c) for c in node.children)


def _describe(node: Any) -> str:
    names = {
        "&": "a command in the background (&)",
        "|&": "a pipe of standard error (|&)",
        "comment": "a comment",
        "variable_assignment": "a variable assignment",
        "redirected_statement": "a redirection",
        "file_redirect": "a redirection",
        "heredoc_redirect": "a here-document",
        "herestring_redirect": "a here-string",
    }
    return names.get(node.type, f"shell syntax ({node.type.replace('_', ' ')})")


# -- deny and ask: every command anywhere --------------------------------------------------------


def _collect(node: Any, source: bytes, depth: int, found: list[Command]) -> None:
    kind = node.type
    if kind == "ERROR" or node.is_missing:
        found.append(Command(UNKNOWN, "a syntax error: bash may read this part differently"))
    elif kind == "command":
        words = _command_words(node, source)
        found.extend(expand(words, "", depth))
    elif re.search(r"[A-Za-z_]", _arithmetic_text(node, source)):
        found.append(Command(UNKNOWN, "arithmetic on a variable can run code the variable holds"))
    elif kind == "subscript" and not _numeric_index(node, source):
        found.append(Command(UNKNOWN, "an array index is arithmetic and can run code"))
    elif kind == "expansion" and any(c.type in ("!", "@") for c in node.children):
        found.append(Command(UNKNOWN, "an indirect or @-operator expansion"))
    elif kind == "declaration_command" and re.search(
        rb"\s-\w*[in]", source[node.start_byte : node.end_byte]
    ):
        found.append(Command(UNKNOWN, "declare -i/-n makes assignments evaluate code"))
    for child in node.children:
        _collect(child, source, depth, found)


def _command_words(node: Any, source: bytes) -> Words:
    words: list[str | None] = []
    end = -1
    for child in node.children:
        if child.type in ("variable_assignment", "file_redirect", "herestring_redirect"):
            end = -1
            continue
        target = child.children[0] if child.type == "command_name" else child
        ok = target.type in _WORD_TYPES and (child.type != "command_name" or child.child_count == 1)
        value = word_value(target, source) if ok else None  # None: not literal, or unknown here
        if child.start_byte == end and words:  # the parser split one bash word in two
            words[-1] = None if words[-1] is None or value is None else words[-1] + value
        else:
            words.append(value)
        end = child.end_byte
    return tuple(words) or UNKNOWN


def _arithmetic_text(node: Any, source: bytes) -> str:
    """The text bash evaluates as arithmetic in this node ("" if none)."""
    kind, children = node.type, node.children
    if kind == "arithmetic_expansion" or (
        kind == "compound_statement" and children and children[0].type == "(("
    ):
        return _text(node, source)
    if kind == "c_style_for_statement":
        ends = [c for c in children if c.type in ("((", "))")]
        if len(ends) < 2:
            return "unclear"
        return source[ends[0].start_byte : ends[-1].end_byte].decode("utf-8", "replace")
    if kind == "test_command" and _ARITHMETIC_TEST.search(_text(node, source)):
        return "[[ -eq ]]"  # [[ a -eq b ]] evaluates both sides as arithmetic
    return ""


def _text(node: Any, source: bytes) -> str:
    return source[node.start_byte : node.end_byte].decode("utf-8", "replace")


def _numeric_index(node: Any, source: bytes) -> bool:
    inside = [c for c in node.children if c.type not in ("variable_name", "[", "]")]
    return all(c.type == "number" and word_value(c, source) is not None for c in inside)


def expand(words: Words, via: str, depth: int) -> list[Command]:
    """The command itself, then whatever it runs: a wrapper's command or a string run as bash."""
    if not words or words[0] is None:
        return [Command(UNKNOWN, via or "the command name is not literal")]
    found = [Command(words, via)]
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
