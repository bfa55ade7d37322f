"""Model text as Markdown that shows everything it holds: nothing in it is hidden or decoded.

Rich's Markdown drops HTML blocks, inline HTML and comments, hides link reference
definitions (`[//]: # (a comment)`), shows an image as its alt text without its address, and
markdown-it decodes entities (`&#x202e;`) and the percent escapes of autolinks into
characters that visible() never saw. Here the parser reads HTML, entities and reference
definitions as the plain text they are, every link is `text (url)`, every image
`[image: alt] (url)`, and all text is passed through visible() once more after parsing.
The cost stays that of one parse and one render of the text.
"""

from __future__ import annotations

from collections.abc import Iterable

from markdown_it import MarkdownIt
from markdown_it.token import Token
from rich.markdown import Markdown

from agentcli.terminal_text import visible

# block and inline rules whose output would hide or decode part of the text
HIDING_RULES = ["html_block", "html_inline", "entity", "reference"]


class ShownMarkdown(Markdown):
    """rich.markdown.Markdown, without OSC 8 hyperlinks, showing all of `markup` (which has
    been through agentcli.terminal_text.visible)."""

    def __init__(self, markup: str) -> None:
        super().__init__("", hyperlinks=False)
        self.markup = markup
        self.parsed = parse_shown(markup)


def parse_shown(markup: str) -> list[Token]:
    """`markup` (through visible() already) parsed as the chat shows it: HTML, entities and
    reference definitions as plain text, links and images as text with their address."""
    parser = MarkdownIt().enable("strikethrough").enable("table").disable(HIDING_RULES)
    return list(_shown(parser.parse(markup)))


def _text(content: str) -> Token:
    return Token("text", "", 0, content=visible(content, marked=True))


def _target(token: Token) -> str:
    """` (url)`, or ` (url "title")` when the link or image has a title."""
    url = str(token.attrs.get("href") or token.attrs.get("src") or "")
    title = token.attrs.get("title")
    return f" ({url} {title!r})" if title else f" ({url})"


def _shown(tokens: Iterable[Token]) -> Iterable[Token]:
    for token in tokens:
        if token.type == "inline" and token.children is not None:
            token.children = list(_inline(token.children))
        elif token.type in ("fence", "code_block"):
            token.content = visible(token.content, marked=True)
        yield token


def _inline(children: list[Token]) -> Iterable[Token]:
    links: list[Token] = []
    for token in children:
        if token.type == "link_open":
            links.append(token)
            if token.markup == "autolink":  # <url>: its text is the url, percent-decoded
                yield _text("<" + str(token.attrs.get("href", "")) + ">")
        elif token.type == "link_close":
            link = links.pop() if links else None
            if link is not None and link.markup != "autolink":
                yield _text(_target(link))
        elif links and links[-1].markup == "autolink":
            continue  # the decoded copy of the url, shown above as it is encoded
        elif token.type == "image":
            yield _text(f"[image: {token.content}]{_target(token)}")
        elif token.type in ("text", "code_inline"):
            token.content = visible(token.content, marked=True)
            yield token
        else:
            yield token
