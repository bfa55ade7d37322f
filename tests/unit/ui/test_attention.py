"""The chat's call back to a waiting review: safe notification text, once, only at a tty."""

from __future__ import annotations

import io
import threading

import pytest

from agentcli.ui.attention import (
    MAX_CHARS,
    Alarm,
    call_summary,
    escapes,
    notification_text,
    review_text,
)
from tests.helpers.waiting import until


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("raw", "safe"),
    [
        ("shell ls -la", "shell ls -la"),
        ("a\x1b]0;title\x07b", "a ]0 title b"),  # ESC, BEL and the OSC separator
        ("x\x9b2Jy\x9c\x90z", "x 2Jy z"),  # C1: CSI, ST, DCS
        ("one\ntwo\r\tthree", "one two three"),
        ("rm\u202e-rf\u200b ~", "rm -rf ~"),  # bidi override, zero-width space
        ("   ", ""),
        ("naïve café ✓", "naïve café ✓"),  # printable text stays as it is
    ],
)
def test_notification_text_keeps_only_what_prints(raw: str, safe: str) -> None:
    assert notification_text(raw) == safe


def test_notification_text_is_clipped() -> None:
    clipped = notification_text("x" * 500)
    assert len(clipped) == MAX_CHARS and clipped.endswith("…")


def test_escapes_hold_no_control_but_their_own() -> None:
    sequence = escapes("shell echo \x1b\\; \x07 \x9c", title="a;b")
    assert sequence == "\a\x1b]9;shell echo \\\x07\x1b]777;notify;a b;shell echo \\\x07"
    body = sequence[len("\a\x1b]9;") : sequence.index("\x07", 1)]
    assert all(ch.isprintable() and ch != ";" for ch in body)


def test_the_summary_names_the_tool_and_its_main_argument() -> None:
    assert call_summary("shell", {"timeout": 5, "command": "make"}) == "shell make"
    assert call_summary("read_file", {"path": "a.txt"}) == "read_file a.txt"
    assert call_summary("mine", {"n": 1, "what": "x"}) == "mine x"
    assert call_summary("mine", {"n": 1}) == 'mine {"n": 1}'
    two = [{"name": "shell", "args": {"command": "ls"}}] * 2
    assert review_text(two) == "approval needed: shell ls (+1 more)"


def test_the_alarm_rings_once_after_its_time() -> None:
    terminal, calls = Tty(), []
    with Alarm(0.05, "shell ls", terminal, lambda: calls.append(1)) as alarm:
        until(lambda: calls, what="the alarm rang")
    # once the review is over nothing rings any more: what was written is all there will be
    assert alarm.rang and calls == [1] and terminal.getvalue() == escapes("shell ls")


def test_an_answered_review_does_not_ring_and_a_pipe_gets_no_escapes() -> None:
    terminal, called = Tty(), threading.Event()
    with Alarm(0.5, "x", terminal, called.set):
        pass
    # a second alarm of the same length, set later, rings later: by then the first is past
    # its time, and had it not been called off it would have rung
    later = threading.Event()
    with Alarm(0.5, "y", None, later.set):
        until(later.is_set, what="the later alarm rang")
    assert not called.is_set() and terminal.getvalue() == ""

    pipe = io.StringIO()  # not a terminal: no escapes, the command still runs
    with Alarm(0.0, "x", pipe, called.set):
        until(called.is_set, what="the command was called")
    assert pipe.getvalue() == ""
