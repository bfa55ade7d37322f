"""The chat's screen while an answer streams (issue 27, bug 8 and its polish).

Each test plays the chat in a pseudo-terminal, in colour, and reads what a terminal would show
(pyte). The scripted server stops its stream at a chosen character until the test lets it go
on (`pause=`), so what the screen shows mid-stream is read without timing anything.
"""

from __future__ import annotations

import re
import threading

import pyte

from agentcli.terminal_text import visible
from tests.e2e.conftest import Agent
from tests.helpers.scripted_server import text, tool_calls
from tests.helpers.terminal import CHOICE

ROWS, COLS = 60, 120
ESCAPE = re.compile(r"\x1b(\[[0-9;?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[()][0-9A-B]|[=>78])")


class Screen:
    """The chat on an emulated ROWS x COLS terminal, with all it wrote so far."""

    def __init__(self, agent: Agent, *args: str, rows: int = ROWS) -> None:
        # COLUMNS empty: the chat reads the terminal's width, and sees it change
        self.child = agent.spawn(*args, env={"NO_COLOR": "", "COLUMNS": ""})
        self.child.setwinsize(rows, COLS)
        self.screen = pyte.Screen(COLS, rows)
        self.stream = pyte.Stream(self.screen)
        self.written = ""

    def expect(self, pattern: str) -> re.Match[str]:
        self.child.expect(pattern)
        seen = self.child.before + self.child.after
        self.stream.feed(seen)
        self.written += seen
        match = self.child.match
        assert isinstance(match, re.Match)
        return match

    def rows(self) -> list[str]:
        return [row.rstrip() for row in self.screen.display]

    def close(self) -> None:
        self.child.close(force=True)


def test_a_streaming_call_shows_its_tool_target_and_bytes(agent: Agent) -> None:
    content = "".join(f"line {i} of the file\n" for i in range(600))
    path = "big\x1b]0;pwned\x07.txt"  # the target is the model's text: shown, never obeyed
    go = threading.Event()
    call = ("write_file", {"path": path, "content": content})
    # the stream stops a third into the content (the joined fragments before it are out)
    agent.server.push(
        tool_calls(call, content="OK.", delay=0.0005, pause=(go, 4000)), text("written")
    )
    chat = Screen(agent, "chat", "write it")
    target = visible(path, multiline=False)
    try:
        size, found = 0, None
        # the first report comes with the call's head, before any byte; one may come with
        # a few bytes, before the target has begun: wait for the one with the target
        while size == 0 or found is None or not found.group(1):
            chat.expect(r"[\d,]+ bytes")
            rows = chat.rows()
            status = [row for row in rows if "writing write_file" in row]
            assert len(status) == 1, rows
            found = re.search(r"writing write_file(?: (.+?))?: ([\d,]+) bytes", status[0])
            assert found, status
            # the target as far as it has come (a report may come before its string ends)
            assert target.startswith(found.group(1) or ""), status
            size = int(found.group(2).replace(",", ""))
        # with bytes, the target: controls as marks, as text
        assert 0 < size < len(content)
        assert "OK." in rows  # the text before the call stays on screen above it
        assert not any("[a]pprove" in row for row in rows)  # the call has not come whole
        assert chat.screen.title == ""  # the OSC 0 in the target set no title
        go.set()
        chat.expect(CHOICE)
        rows = chat.rows()
        assert not any("writing write_file" in row for row in rows), rows  # gone for the review
    finally:
        go.set()
        chat.close()


CODE = "".join(f"value_{i} = {i}\n" for i in range(30))
LONG = "x = '" + "a" * 150 + "'  # END-OF-LONG"  # longer than the screen is wide


def test_a_half_streamed_block_never_draws_its_closing_fence_and_long_lines_stay_whole(
    agent: Agent,
) -> None:
    answer = "Here:\n\n```python\n" + CODE + LONG + "\n``" + "`\n\nDone.\n"
    go = threading.Event()
    # the stream stops after the first two characters of the closing fence
    agent.server.push(text(answer, pause=(go, answer.index(LONG) + len(LONG) + 3)))
    chat = Screen(agent, "chat", "show me")
    try:
        chat.expect("# END-OF-LONG")  # the last line of code, in the live part
        rows = chat.rows()
        code = [row.strip() for row in rows if row.strip().startswith(("value_", "``"))]
        assert code[-1] == "value_29 = 29" and "value_0 = 0" in code, rows
        assert not any(row.strip().startswith("``") for row in rows), rows
        go.set()
        chat.expect(r"Done\.")
        chat.expect("you>")
        rows = chat.rows()
        assert not any(row.strip().startswith("``") for row in rows), rows
        # printed for good, the long line is one line of output: the terminal wraps it, so
        # a copy of it is the line (a line cut with newlines would break the code)
        plain = ESCAPE.sub("", chat.written)
        assert " " + LONG in plain
        at = next(i for i, row in enumerate(rows) if row.startswith(" x = 'aaa"))
        assert (rows[at] + rows[at + 1]).strip() == LONG  # shown whole, over two rows
        assert [row.strip() for row in rows].count("value_29 = 29") == 1
        # every redraw (each move back up) is one synchronized update (DEC mode 2026)
        assert_synchronized(chat.written)
    finally:
        go.set()
        chat.close()


def assert_synchronized(written: str) -> None:
    """Each cursor-up in `written` lies inside an ESC[?2026h ... ESC[?2026l bracket."""
    marks = re.finditer(r"\x1b\[\?2026([hl])|\x1b\[\d*A", written)
    inside, ups, brackets = False, 0, 0
    for mark in marks:
        if mark.group(1) == "h":
            assert not inside, "a bracket opened twice"
            inside, brackets = True, brackets + 1
        elif mark.group(1) == "l":
            assert inside, "a bracket closed that was not open"
            inside = False
        else:
            assert inside, f"a cursor-up outside a synchronized update at {mark.start()}"
            ups += 1
    assert not inside and ups > 0 and brackets > 0


def test_a_resize_mid_block_prints_no_line_twice(agent: Agent) -> None:
    # 100 characters an item: a row at 120 columns, two at 80
    words = ("the list is one open block while it streams " * 2).strip()
    items = "".join(f"- item {i:02d}: {words}\n" for i in range(40))
    answer = "A list:\n\n" + items + "\nDone.\n"
    go = threading.Event()
    # the stream stops at the end of item 29's text (before its newline). The emulator is
    # resized once it has read that text: what the same write holds after it reaches the
    # emulator at the new width, as when a terminal is resized while a write's end is on
    # its way. A live row padded with blanks to the old width then wrapped there, and the
    # next redraw went back up one row too few (item 22 was left on the screen twice).
    agent.server.push(text(answer, pause=(go, answer.index("- item 30") - 1)))
    chat = Screen(agent, "chat", "list them", rows=150)  # the whole answer stays on it
    try:
        chat.expect(re.escape(f"item 29: {words}"))
        chat.child.setwinsize(150, 80)  # narrower: the list would wrap at other rows
        chat.screen.resize(150, 80)
        go.set()
        chat.expect(r"Done\.")
        chat.expect("you>")
        lines = [row.strip() for row in chat.rows()]
        for i in range(40):
            assert sum(row.startswith(f"• item {i:02d}:") for row in lines) == 1, "\n".join(lines)
    finally:
        go.set()
        chat.close()


def test_what_came_is_on_the_screen_while_the_stream_stalls(agent: Agent) -> None:
    """A stream that stops mid-line: what came is on the screen before the rest comes."""
    answer = "First part of the answer, and then the model thinks for a while"
    go = threading.Event()
    agent.server.push(text(answer + "... then goes on.", pause=(go, len(answer))))
    chat = Screen(agent, "chat", "go")
    try:
        chat.expect("thinks for a while")
        go.set()
        chat.expect(r"then goes on\.")
        chat.expect("you>")
    finally:
        go.set()
        chat.close()
