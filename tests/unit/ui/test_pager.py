"""The whole call for the pager, and the JSON an inline edit starts from."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from agentcli.terminal_text import dumps_shown, unmark, visible
from agentcli.ui.call_preview import MAX_PREVIEW_LINES, preview
from agentcli.ui.pager import shows_colour, whole_call

SGR = re.compile(r"\x1b\[[0-9;]*m")


@pytest.mark.parametrize(
    ("command", "colour"),
    [
        (["less", "-R"], True),
        (["/usr/bin/less", "-FRX"], True),
        (["less", "--RAW-CONTROL-CHARS"], True),
        (["less"], False),
        (["less", "-r"], False),  # raw everything: not asked for, so plain
        (["more"], False),
        (["most", "-R"], False),
        (["cat"], False),
    ],
)
def test_colour_only_for_less_dash_r(command: list[str], colour: bool) -> None:
    assert shows_colour(command) is colour


def test_the_pager_gets_every_line_and_no_escape_but_colour(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("".join(f"old {i}\n" for i in range(400)))
    args = {"path": "f", "content": "".join(f"new {i}\x1b[2K\n" for i in range(400))}
    assert "more lines" in preview("write_file", args, tmp_path).text
    assert len(preview("write_file", args, tmp_path, limit=None).text.splitlines()) > 800
    for colour in (False, True):
        got = whole_call("write_file", args, tmp_path, "needs review", 100, colour)
        assert bool(SGR.search(got)) is colour
        plain = SGR.sub("", got)
        assert "\x1b" not in plain
        assert "more lines" not in plain and plain.count("⟦ESC⟧[2K") == 400
        assert all(f"-old {i}" in plain and f"+new {i}" in unmark(plain) for i in range(400))
    assert MAX_PREVIEW_LINES < 800


@pytest.mark.parametrize(
    "value",
    [
        {"command": "echo \u202eevil\u202c"},
        {"text": "zero\u200bwidth ⟦ESC⟧ \x1b[2J \u00a0 e\u0301 \U000e0041 \ud800"},
        {"nested": [1, 2.5, True, None, {"k": "\u2028"}]},
    ],
)
def test_the_inline_json_loads_back_the_same_and_shows_as_itself(value: object) -> None:
    shown = dumps_shown(value)
    assert json.loads(shown) == value
    assert visible(shown, multiline=False) == shown  # nothing in it a terminal would act on
    assert "\n" not in shown
