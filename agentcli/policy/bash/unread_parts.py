"""Parts of a tree-sitter-bash tree that bash reads differently, or more deeply, than the tree.

tree-sitter-bash returns a tree for any input, but not always bash's tree: it keeps text it did
not parse as an opaque leaf (a here-doc body line that starts with blanks and `$(`, the operand
of `${x:-...}`, backticks escaped inside backticks), it accepts reserved words as command names
(`time if ...`), and some of its nodes hide code that bash evaluates later (an array index is
arithmetic, arithmetic on a variable runs what the variable holds). `reason(node, ...)` answers
for one node: "" when the tree shows everything bash will do with it, else why not. The caller
(agentcli/policy/bash/parse.py) then counts the line as not fully known: fail closed.
"""

from __future__ import annotations

import re
from typing import Any

from agentcli.policy.bash.words import text, word_value

# An expansion bash would perform: `$(`, `${`, `$[` or a backtick, in text the tree left as text.
_EXPANSION = re.compile(r"`|\$[({\[]")
_ESCAPE = re.compile(rb"\\.", re.DOTALL)
# In these, single quotes and `$'..'` are plain characters and whatever follows is expanded.
_LITERAL_QUOTES_END = {"string", "heredoc_body", "arithmetic_expansion", "translated_string"}
_OPAQUE_OK = {"raw_string", "ansi_c_string"}  # quoted text bash never expands (outside the above)
_NOT_TEXT = {"heredoc_start", "heredoc_end", "comment"}
_COMMENT_BEFORE = b" \t\n;&|()"
_ARITHMETIC_TEST = re.compile(r"\s-(eq|ne|lt|le|gt|ge)\s")
_SUBSTRING = re.compile(r"\$\{[^}]*?[A-Za-z0-9_@*\]]:(?![-=+?])")
_LITERAL_OFFSETS = re.compile(r"\s*-?\s*\d+\s*(:\s*-?\s*\d+\s*)?\}")
_DELIMITER = re.compile(r"(['\"]?)([A-Za-z0-9_.-]+)\1|\\?([A-Za-z0-9_.-]+)")
_NUMERIC_INDEX = re.compile(r"\[\s*\d+\s*\]")


class Context:
    """What surrounds a node: inside double quotes or a here-doc, inside backticks."""

    __slots__ = ("backticks", "quoted", "literal_heredocs")

    def __init__(self, quoted: bool = False, backticks: bool = False, literal: bool = True):
        self.quoted = quoted
        self.backticks = backticks
        self.literal_heredocs = literal  # False when the line has more than one here-doc

    def inside(self, node: Any) -> Context:
        kind = node.type
        backticks = self.backticks or (
            kind == "command_substitution" and bool(node.children) and node.children[0].type == "`"
        )
        quoted = self.quoted or kind in _LITERAL_QUOTES_END or _double_parens(node)
        if backticks == self.backticks and quoted == self.quoted:
            return self
        return Context(quoted, backticks, self.literal_heredocs)


def reason(node: Any, source: bytes, context: Context) -> str:
    """Why bash may do more with this node than the tree shows ("" when it does not)."""
    if why := _unparsed(node, source, context):
        return why
    kind = node.type
    if _arithmetic_on_names(node, source):
        return "arithmetic on a variable can run code the variable holds"
    if kind == "subscript" and not _numeric_index(node, source):
        return "an array index is arithmetic and can run code"
    if kind == "expansion":
        return _expansion(node, source)
    if kind == "array" and not all(_array_element_ok(c, source) for c in node.named_children):
        return "an array index is arithmetic and can run code"
    if kind == "unary_expression" and _tests_a_variable(node, source):
        return "`-v` on an array element evaluates its index"
    if kind == "heredoc_redirect":
        return _heredoc(node, source)
    if kind == "comment":
        before = source[node.start_byte - 1 : node.start_byte] if node.start_byte else b"\n"
        if before not in _COMMENT_BEFORE:
            return "a `#` bash reads as part of a word, not as a comment"
    return ""


def literal_heredoc(node: Any, source: bytes) -> bool:
    """Is this here-doc body left as it is (its delimiter quoted)?"""
    parent = node.parent
    starts = [c for c in parent.children if c.type == "heredoc_start"] if parent else []
    return len(starts) == 1 and any(q in text(starts[0], source) for q in "'\"\\")


def _unparsed(node: Any, source: bytes, context: Context) -> str:
    """Text of this node that is none of its children and that bash would expand."""
    kind = node.type
    if not node.is_named or kind in _NOT_TEXT:
        return ""
    if kind in _OPAQUE_OK and not context.quoted and not context.backticks:
        return ""
    if kind == "heredoc_body" and context.literal_heredocs and literal_heredoc(node, source):
        return ""
    position, pieces = node.start_byte, []
    for child in node.children:
        pieces.append(source[position : child.start_byte])
        position = max(position, child.end_byte)
    pieces.append(source[position : node.end_byte])
    own = b"\0".join(pieces)
    if not context.backticks:  # `\$(` is a literal `$(`, except where backticks unescape it
        own = _ESCAPE.sub(b"", own)
    if _EXPANSION.search(own.decode("utf-8", "replace")):
        return "an expansion the parser left as text (bash would run it)"
    return ""


def _double_parens(node: Any) -> bool:
    children = node.children
    return node.type in ("compound_statement", "c_style_for_statement") and any(
        c.type == "((" for c in children
    )


def _arithmetic_on_names(node: Any, source: bytes) -> bool:
    """Does bash evaluate this node as arithmetic, with a name in it?"""
    kind, children = node.type, node.children
    if kind == "arithmetic_expansion" or (
        kind == "compound_statement" and children and children[0].type == "(("
    ):
        arithmetic = text(node, source)
    elif kind == "c_style_for_statement":
        ends = [c for c in children if c.type in ("((", "))")]
        if len(ends) < 2:
            return True
        arithmetic = source[ends[0].start_byte : ends[-1].end_byte].decode("utf-8", "replace")
    elif kind == "test_command" and _ARITHMETIC_TEST.search(text(node, source)):
        return True  # [[ a -eq b ]] evaluates both sides as arithmetic
    else:
        return False
    return re.search(r"[A-Za-z_]", arithmetic) is not None


def _numeric_index(node: Any, source: bytes) -> bool:
    inside = [c for c in node.children if c.type not in ("variable_name", "[", "]")]
    if len(inside) == 1 and text(inside[0], source) in ("@", "*"):
        return True  # `${a[@]}`: every element, no arithmetic
    return all(c.type == "number" and word_value(c, source) is not None for c in inside)


def _expansion(node: Any, source: bytes) -> str:
    whole = text(node, source)
    if any(c.type in ("!", "@") for c in node.children):
        return "an indirect or @-operator expansion"
    if substring := _SUBSTRING.match(whole):
        if not _LITERAL_OFFSETS.fullmatch(whole[substring.end() :]):
            return "a substring offset is arithmetic and can run code"
    return ""


def _array_element_ok(node: Any, source: bytes) -> bool:
    """`a=([i]=v)`: the index `i` is arithmetic; only a number is known."""
    element = text(node, source)
    return not element.startswith("[") or _NUMERIC_INDEX.match(element) is not None


def _tests_a_variable(node: Any, source: bytes) -> bool:
    operator = node.children[0] if node.children else None
    if operator is None or text(operator, source) not in ("-v", "-R"):
        return False
    operands = node.children[1:]
    values = [word_value(c, source) for c in operands]
    return len(values) != 1 or values[0] is None or "[" in values[0]


def _heredoc(node: Any, source: bytes) -> str:
    """bash ends a here-doc at the first line that is its delimiter: the parser must agree."""
    starts = [c for c in node.children if c.type == "heredoc_start"]
    ends = [c for c in node.children if c.type == "heredoc_end"]
    if len(starts) != 1 or len(ends) != 1:
        return "a here-document the parser did not read whole"
    delimiter = re.fullmatch(
        r"(['\"]?)([A-Za-z0-9_.-]+)\1|\\?([A-Za-z0-9_.-]+)", text(starts[0], source)
    )
    if delimiter is None:
        return "a here-document delimiter it cannot read"
    word = delimiter.group(2) or delimiter.group(3)
    strip = any(c.type == "<<-" for c in node.children)
    line_start = source.find(b"\n", starts[0].end_byte) + 1
    body = source[line_start if line_start else ends[0].start_byte : ends[0].start_byte]
    for line in body.decode("utf-8", "replace").split("\n")[:-1]:
        if (line.lstrip("\t") if strip else line) == word:
            return "a here-document that ends before the parser thinks"
    if text(ends[0], source) != word:
        return "a here-document that ends where the parser does not think"
    return ""
