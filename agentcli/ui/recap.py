"""A resumed thread's last exchanges, shown before the prompt: each message (cut to a few
lines), each tool call collapsed to one line with its decision. Every piece of it is
untrusted (the person's messages, the model's answers and calls, tool names) and is shown
through agentcli.ui.safe_text: controls and invisible characters as marks, never as markup."""

from __future__ import annotations

import json
from typing import Any

from agentcli_tools.plurals import counted
from rich.console import Group, RenderableType
from rich.text import Text

from agentcli.session.review_preview import recent
from agentcli.ui.safe_text import safe, safe_line, styled

MESSAGE_LINES = 12
MESSAGE_CHARS = 2000
ARGS_CHARS = 80
RAN = ("approved", "allowed", "edited")  # decisions after which the call ran


def recap(
    entries: list[dict[str, Any]], thread_id: str, markdown: bool = False
) -> list[RenderableType]:
    """What to print for the last exchanges of `entries` (review_preview.EXCHANGES of them)
    (agentcli.session.transcript.entries); none for a thread with no messages. `markdown`:
    the model's answers rendered as the chat renders them (at a colour terminal)."""
    return recap_of(*recent(entries), thread_id, markdown)


def recap_of(
    earlier: int, entries: list[dict[str, Any]], thread_id: str, markdown: bool = False
) -> list[RenderableType]:
    """The recap of `entries`, the last exchanges, after `earlier` ones not shown (a review
    preview holds these two: session/review_preview.py)."""
    if not entries:
        return []
    about = f"{counted(earlier, 'earlier exchange')} not shown: " if earlier else ""
    lines: list[RenderableType] = [
        styled((f"── so far ({about}agentcli threads show {thread_id} shows all)", "dim"))
    ]
    for entry in entries:
        if entry["text"] and markdown and entry["role"] != "user":
            lines.append(answer(entry["text"]))
        elif entry["text"]:
            lines.append(message(entry["role"], entry["text"]))
        lines += [call_line(call) for call in entry.get("calls", [])]
    lines.append(styled(("──", "dim")))
    return lines


def message(role: str, text: str) -> Text:
    """`you: ...` or `assistant: ...`, at most MESSAGE_LINES lines of MESSAGE_CHARS in all."""
    who = ("you: ", "bold cyan") if role == "user" else ("assistant: ", "bold")
    kept, cut = _kept(text)
    shown = styled(who)
    shown.append_text(safe(kept))
    if cut:
        shown.append(cut, style="dim italic")
    return shown


def answer(text: str) -> Group:
    """`assistant:`, then the answer (cut as `message` cuts it) as Markdown, as the chat
    showed it: made visible first, and parsed so that nothing in it is hidden or decoded
    (agentcli/ui/markdown.py). An unclosed code fence at the cut is left open: the cut
    note below it says the rest is not shown."""
    from agentcli.terminal_text import visible
    from agentcli.ui.markdown import ShownMarkdown

    kept, cut = _kept(text)
    parts: list[RenderableType] = [Text("assistant:", style="bold")]
    parts.append(ShownMarkdown(visible(kept)))
    if cut:
        parts.append(Text(cut.strip(), style="dim italic"))
    return Group(*parts)


def _kept(text: str) -> tuple[str, str]:
    """At most MESSAGE_LINES lines of MESSAGE_CHARS of `text`, and the note on the cut
    ("" when nothing was cut)."""
    lines = text.strip("\n").split("\n")  # not splitlines: a \r is shown as a mark
    kept = "\n".join(lines[:MESSAGE_LINES])
    cut = len(lines) - MESSAGE_LINES
    if len(kept) > MESSAGE_CHARS:
        kept, cut = kept[:MESSAGE_CHARS], max(cut, 0) + 1
    return kept, f" … (cut: {counted(len(text), 'char', grouped=True)} in all)" if cut > 0 else ""


def call_line(call: dict[str, Any]) -> Text:
    """`  ▸ read_file path=README.md (approved)`: a call on one line, its arguments cut."""
    record = call.get("decision")
    if record is not None:
        outcome = str(record.get("decision"))
        if outcome in RAN and call.get("status") == "error":
            outcome += ", failed"
    else:
        outcome = "awaiting review" if call.get("status") == "pending" else "not reviewed"
    line = Text("  ▸ ", style="cyan")
    line.append_text(safe_line(call.get("tool"), "cyan"))
    args = arguments(call.get("args"))
    if args:
        line.append_text(safe_line(" " + args))
    line.append_text(safe_line(f" ({outcome})", "dim"))
    return line


def arguments(args: Any) -> str:
    """`key=value ...` (strings as they are, other values as JSON), cut to ARGS_CHARS."""
    if isinstance(args, dict):
        text = " ".join(
            f"{key}={value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)}"
            for key, value in args.items()
        )
    else:
        text = "" if args is None else json.dumps(args, ensure_ascii=False)
    return text if len(text) <= ARGS_CHARS else text[: ARGS_CHARS - 1] + "…"
