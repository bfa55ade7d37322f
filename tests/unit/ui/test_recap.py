"""The resume recap (agentcli/ui/recap.py): the last exchanges, one line per call, safe."""

from __future__ import annotations

from agentcli_tools.plurals import plural

from agentcli.session.review_preview import EXCHANGES
from agentcli.ui.recap import ARGS_CHARS, MESSAGE_LINES, call_line, message, recap


def exchange(number: int, calls: list[dict] | None = None) -> list[dict]:
    return [
        {"role": "user", "text": f"question {number}"},
        {"role": "assistant", "text": f"answer {number}", "calls": calls or []},
    ]


def test_only_the_last_exchanges_are_shown_and_the_rest_counted() -> None:
    entries = [entry for number in range(1, 6) for entry in exchange(number)]
    lines = [line.plain for line in recap(entries, "abc123")]
    assert f"{5 - EXCHANGES} earlier {plural('exchange', 5 - EXCHANGES)} not shown" in lines[0]
    assert "agentcli threads show abc123" in lines[0]
    shown = [line for line in lines if line.startswith(("you: ", "assistant: "))]
    assert shown == [
        f"{who}: {what} {n}"
        for n in range(6 - EXCHANGES, 6)
        for who, what in (("you", "question"), ("assistant", "answer"))
    ]
    assert recap([], "abc123") == []


def test_a_call_is_one_line_with_its_decision_whatever_its_arguments() -> None:
    call = {
        "tool": "shell\x1b[2J",
        "args": {"command": "echo hi\n\x1b]0;title\x07rm -rf x", "timeout": 5},
        "decision": {"decision": "approved"},
        "status": "error",
    }
    line = call_line(call).plain
    assert "\n" not in line and "\x1b" not in line and "\x07" not in line
    assert line.startswith("  ▸ shell⟦ESC⟧[2J command=echo hi⟦LF⟧⟦ESC⟧]0;title⟦BEL⟧rm")
    assert line.endswith(" (approved, failed)")
    pending = call_line({"tool": "read_file", "args": {"path": "README.md"}, "status": "pending"})
    assert pending.plain == "  ▸ read_file path=README.md (awaiting review)"
    long = call_line({"tool": "write_file", "args": {"content": "x" * 500}, "decision": None})
    assert len(long.plain) < ARGS_CHARS + 40 and "…" in long.plain


def test_a_long_message_is_cut_and_says_so() -> None:
    text = "\n".join(f"line {n}" for n in range(40))
    shown = message("assistant", text).plain
    assert shown.count("\n") == MESSAGE_LINES - 1
    assert f"line {MESSAGE_LINES - 1}" in shown and f"line {MESSAGE_LINES}" not in shown
    assert shown.endswith(f"(cut: {len(text):,} chars in all)")
    one_line = message("user", "y" * 10_000).plain
    assert "(cut:" in one_line and len(one_line) < 2100
    assert message("user", "short").plain == "you: short"
