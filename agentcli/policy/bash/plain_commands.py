"""The plain simple commands of a bash line: what an allow rule may match.

A line is plain when it is only simple commands of literal words joined by `;`, `&&`, `||`,
`|` and newlines, parsed without error, with nothing but blanks between the parser's tokens.
Anything else (expansions, redirections, control flow, assignments, comments, ...) makes it
not plain, and `plain` says why.
"""

from __future__ import annotations

from typing import Any

from agentcli.policy.bash.words import WORD_TYPES, text, word_value

_PLAIN_JOINS = {";", "&&", "||", "|"}
RESERVED = {
    "if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while", "until",
    "do", "done", "in", "function", "time", "coproc", "{", "}", "!", "[[", "]]",
}  # fmt: skip


def plain(root: Any, source: bytes, out: list[tuple[str, ...]]) -> str:
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
        if target.type not in WORD_TYPES:
            return f"it has {_describe(child)}"
        value = word_value(target, source)
        if value is None:
            return f"the word {text(target, source)!r} is not literal (quoting, expansion or glob)"
        words.append(value)
    if not words or words[0] in RESERVED:
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
