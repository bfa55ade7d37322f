"""A thread as CommonMark to read (`threads export --format md`, `/export`): the model's
Markdown renders as the chat showed it, and no untrusted text can forge the export's own
structure.

The structure is agentcli's: the title heading, then each turn's label (`**You:**`,
`**Assistant:**`) at the top level, its text in a block quote, each tool call a top-level
list item whose arguments and result sit in fences. Untrusted text never reaches the top
level: every line of a message starts with agentcli's `>`, and nothing inside a block quote
can end it (an unclosed fence or HTML block closes with its container); arguments and
results sit in fences longer than any backtick run in them.

Inside its quote, the model's text is not copied but parsed as the chat parses it
(agentcli/ui/markdown.py: HTML, entities and reference definitions are plain text, a link
is `text (url)`, an image `[image: alt] (url)`) and written out again: emphasis, code,
headings, lists, quotes, fences and tables as Markdown, and every piece of text escaped
(`inert`), so what renders is exactly the structure the chat showed, each text as it is.
The person's messages and the one-line fields (title, decisions) are text, not Markdown:
escaped whole. Controls and invisible characters are marks (agentcli.terminal_text).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from agentcli.session.transcript import DROPPED_NOTE, decision_text, dropped_calls, entries, speaker
from agentcli.terminal_text import dumps, line, visible

if TYPE_CHECKING:
    from markdown_it.tree import SyntaxTreeNode

    from agentcli.thread_rows import ThreadRow


def to_markdown(row: ThreadRow, values: dict[str, Any]) -> str:
    """The whole thread as Markdown: its heading, then each turn and each call."""
    about = f"{row.model} · {row.workspace} · updated {row.updated_at}"
    lines = [f"# {inert(row.title)}", "", f"Thread {code_span(row.thread_id)} · {inert(about)}"]
    for entry in entries(values):
        who = speaker(entry)
        if entry["text"] or entry.get("cut_off"):
            said = quoted(entry["text"]) if entry["role"] == "user" else rendered(entry["text"])
            lines += ["", f"**{inert(who[0].upper() + who[1:])}:**", "", *said]
        for name in dropped_calls(entry):
            lines += ["", f"- tool {code_span(name)} {inert(DROPPED_NOTE)}"]
        for call in entry.get("calls", []):
            decision = inert(decision_text(call["decision"]))
            failed = ", failed" if call["result"] is not None and call["status"] == "error" else ""
            lines += ["", f"- tool {code_span(call['tool'])} ({decision}){failed}"]
            lines += ["", *_indented(fenced(dumps(call["args"]), "json"))]
            if call["result"] is not None:
                lines += ["", *_indented(fenced(call["result"]))]
    return "\n".join(lines) + "\n"


# Markup in one pattern, matched on the text itself: the ASCII punctuation that is markup
# anywhere in a line, in CommonMark or GitHub's Markdown (escapes, code, emphasis,
# strikethrough and fences, links, images, footnotes and reference definitions, HTML,
# autolinks and quotes, entities, headings, tables, math); what is markup where it stands:
# a list item, setext underline or rule at the start of a line (`-`, `+`, `=`), an ordered
# list item (`1.`, `2)`); and an emoji code (`:x:`: GitHub's names hold a letter, but for
# `:100:`, `:1234:`, `:+1:` and `:-1:`; so a time's `10:43:56+00:00` is left as it is).
# CommonMark reads a backslash before any ASCII punctuation as that character.
_MARKUP = re.compile(
    r"(?m)[\\`*_~\[\]<>&#|$]|^([ \t]*[0-9]{0,9})([-+=.)])"
    r"|:(?=[\w+-]*[^\W\d][\w+-]*:|(?:100|1234|[+-]1):)"
)


def escaped(shown: str) -> str:
    """Text already made visible, with every punctuation character that could be markup
    escaped: it renders as itself."""
    return _MARKUP.sub(lambda m: f"{m[1]}\\{m[2]}" if m[2] else f"\\{m[0]}", shown)


def inert(text: object, multiline: bool = False) -> str:
    """Untrusted text as Markdown that shows as that text: marks for controls, one line
    unless `multiline`, every punctuation character that could be markup escaped."""
    return escaped(visible(text, multiline=multiline))


def quoted(text: str) -> list[str]:
    """Text as a block quote: each of its lines inert, none able to end the quote."""
    return _quote(inert(text, multiline=True).split("\n"))


def rendered(text: str) -> list[str]:
    """The model's Markdown as a block quote that renders as the chat showed it."""
    from markdown_it.tree import SyntaxTreeNode

    from agentcli.ui.markdown import parse_shown

    tree = SyntaxTreeNode(parse_shown(visible(text)))
    return _quote(_blocks(tree.children, tight=False))


def _quote(lines: list[str]) -> list[str]:
    return [f"> {shown}" if shown else ">" for shown in lines] or [">"]


def _indented(lines: list[str], prefix: str = "  ") -> list[str]:
    """Lines moved right (to sit in a list item); blank lines stay blank."""
    return [prefix + shown if shown else "" for shown in lines]


def _fence(text: str) -> str:
    """Backticks enough that no run inside `text` closes the fence or span early."""
    longest = max((len(run) for run in re.findall("`+", text)), default=0)
    return "`" * (longest + 1)


def code_span(value: object) -> str:
    """`value` on one line as inline code that no backtick inside can end."""
    text = line(value)
    return _span(text)


def _span(text: str) -> str:
    """A code span of `text`, as CommonMark reads one back: a space each side is taken off
    when both are there and the text is not all spaces, so one is added each side then, and
    when a backtick starts or ends it (it would join the fence); empty text is one space."""
    fence = _fence(text)
    spaced = text[:1] == text[-1:] == " " and text.strip(" ")
    pad = " " if spaced or text[:1] == "`" or text[-1:] == "`" or not text else ""
    return f"{fence}{pad}{text}{pad}{fence}"


# an info string kept only when it is a plain language name: anything else could be read
# as more than a name by some renderer, and a backtick in it would end nothing but is refused
LANGUAGE = re.compile(r"[A-Za-z0-9_+.#-]{1,40}")


def fenced(text: str, info: str = "", shown: bool = False) -> list[str]:
    """A fenced code block longer than any backtick run in `text` (`shown`: made visible
    already)."""
    body = (text if shown else visible(text)).removesuffix("\n").split("\n")
    fence = max(_fence(text), "```", key=len)
    return [f"{fence}{info if LANGUAGE.fullmatch(info) else ''}", *body, fence]


# ---- the model's Markdown, written out again from the parse ----------------------------


def _blocks(nodes: list[SyntaxTreeNode], tight: bool) -> list[str]:
    """Block nodes as lines, a blank line between them (none in a tight list)."""
    out: list[str] = []
    previous = ""
    for node in nodes:
        lines = _block(node, previous)
        if out and not tight:
            out.append("")
        out += lines
        previous = node.type
    return out


def _block(node: SyntaxTreeNode, previous: str) -> list[str]:
    kind = node.type
    if kind == "paragraph":
        return _inline_lines(node)
    if kind == "heading":
        level = int(node.tag[1:]) if node.tag[1:].isdigit() else 1
        return ["#" * level + " " + " ".join(_inline_lines(node, "heading"))]
    if kind in ("fence", "code_block"):
        return fenced(node.content, node.info.split(" ")[0] if node.info else "", shown=True)
    if kind == "blockquote":
        return _quote(_blocks(node.children, tight=False))
    if kind in ("bullet_list", "ordered_list"):
        return _list(node, previous)
    if kind == "hr":  # not `***` (after `* ` it is a rule), not `---` (it underlines)
        return ["___"]
    if kind == "table":
        return _table(node)
    return [escaped(node.content)] if node.content else []  # none other is enabled


def _list(node: SyntaxTreeNode, previous: str) -> list[str]:
    """A list, its items' first lines after their markers, the rest moved under them. Two
    lists in a row stay two: the second gets the other marker."""
    ordered = node.type == "ordered_list"
    tight = any(getattr(p, "hidden", False) for item in node.children for p in item.children)
    start = int(node.attrs.get("start", 1)) if ordered else 1
    out: list[str] = []
    for number, item in enumerate(node.children, start):
        if ordered:
            marker = f"{number}{')' if previous == 'ordered_list' else '.'} "
        else:
            marker = "* " if previous == "bullet_list" else "- "
        lines = _blocks(item.children, tight) or [""]
        if item.children and item.children[0].type.endswith("_list"):
            lines = ["", *lines]  # a list in a list starts on the next line: `- - -` is a rule
        if out and not tight:
            out.append("")
        out.append((marker + lines[0]).rstrip(" "))
        out += _indented(lines[1:], " " * len(marker))
    return out


def _table(node: SyntaxTreeNode) -> list[str]:
    rows = [row for part in node.children for row in part.children]
    out = []
    for index, row in enumerate(rows):
        cells = [" ".join(_inline_lines(cell, "cell")) for cell in row.children]
        out.append("| " + " | ".join(cells) + " |")
        if index == 0:
            out.append("| " + " | ".join(_align(cell) for cell in row.children) + " |")
    return out


def _align(cell: SyntaxTreeNode) -> str:
    style = str(cell.attrs.get("style", ""))
    return {"text-align:left": ":--", "text-align:right": "--:", "text-align:center": ":-:"}.get(
        style, "---"
    )


def _inline_lines(node: SyntaxTreeNode, where: str = "block") -> list[str]:
    """A paragraph's, heading's or table cell's text as Markdown lines: a heading or a cell
    is one line, each line break in it a space."""
    inline = node.children[0] if node.children and node.children[0].type == "inline" else node
    return _joined(inline.children, where).split("\n")


def _joined(nodes: list[SyntaxTreeNode], where: str) -> str:
    """Inline nodes written one after the other, emphasis with the delimiters the text
    used (they parsed so there), but `_` right after a `*` (`*a**b*` would be one)."""
    out = ""
    for node in nodes:
        after_star = out.endswith("*") and node.markup == "*"
        out += _inline(node, where, "_" if after_star else node.markup)
    return out


def _inline(node: SyntaxTreeNode, where: str, mark: str = "") -> str:
    kind = node.type
    if kind in ("softbreak", "hardbreak"):
        return " " if where != "block" else "\n" if kind == "softbreak" else "\\\n"
    if kind == "code_inline":
        span = _span(node.content)
        return span.replace("|", "\\|") if where == "cell" else span  # GFM reads `|` first
    if kind in ("em", "strong", "s"):
        char = (mark or "*")[0]
        delimiter = {"em": char, "strong": char * 2, "s": "~~"}[kind]
        return f"{delimiter}{_joined(node.children, where)}{delimiter}"
    return escaped(node.content)  # text, and any other token, as the text it is
