"""Untrusted text as Rich `Text`: controls and invisible characters shown as marks (see
agentcli/terminal_text.py) in reverse video, never read as Rich markup or as terminal codes."""

from __future__ import annotations

from rich.text import Text

from agentcli.terminal_text import parts

MARK_STYLE = "reverse"


def safe(text: object, style: str = "", multiline: bool = True, tabs: bool = False) -> Text:
    """`text` as a Text whose unsafe characters are marks in MARK_STYLE; `tabs`: tabs
    expanded to the next tab stop, as layout (terminal_text.parts says where that fits)."""
    out = Text(style=style)
    shown = parts(text if isinstance(text, str) else str(text), multiline, tabs=tabs)
    for piece, is_mark in shown:
        out.append(piece, style=MARK_STYLE if is_mark else None)
    return out


def safe_line(text: object, style: str = "", tabs: bool = False) -> Text:
    """A one-line field (a name, an id, a title, a path): newlines marked too, and tabs
    unless `tabs` (a line of a result: tabs are its layout)."""
    return safe(text, style, multiline=False, tabs=tabs)


def styled(*pieces: tuple[object, str] | object, multiline: bool = False) -> Text:
    """Like Text.assemble, each piece ("text", "style") or plain text, every piece made
    safe (agentcli's own labels pass through unchanged). One line unless `multiline`."""
    out = Text()
    for piece in pieces:
        text, style = piece if isinstance(piece, tuple) else (piece, "")
        out.append_text(safe(text, style, multiline))
    return out


def mark_spans(text: Text, shown: str) -> None:
    """Style the marks in `text`, whose plain text is `shown` (made by visible())."""
    from agentcli.terminal_text import CLOSE, OPEN

    start = shown.find(OPEN)
    while start != -1:
        end = shown.find(CLOSE, start)
        if end == -1:
            return
        text.stylize(MARK_STYLE, start, end + 1)
        start = shown.find(OPEN, end)
