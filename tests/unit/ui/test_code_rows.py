"""Code rows (agentcli/ui/code_rows.py): one row a line, never hard-wrapped."""

from __future__ import annotations

from rich.cells import cell_len

from agentcli.ui.code_rows import CodeRows, fit


def test_a_long_line_is_one_row_padded_to_whole_widths() -> None:
    long = "x = '" + "a" * 150 + "'"
    rows = CodeRows("python").rows(["short = 1", long, "\tindented"], 60)
    assert len(rows) == 3  # one a line: nothing cut with a newline
    texts = ["".join(s.text for s in row) for row in rows]
    assert texts[1].strip() == long
    assert [cell_len(t) for t in texts] == [60, 180, 60]  # the block stays a block
    assert texts[2].startswith("     indented")  # the tab as four columns, never raw
    assert "\t" not in "".join(texts) and "\n" not in "".join(texts)


def test_the_live_part_cuts_a_long_row_and_drops_rich_padding() -> None:
    rows = CodeRows("python").rows(["y" * 130], 60)
    pieces = fit(rows[0], 60)
    assert [cell_len("".join(s.text for s in p)) for p in pieces] == [60, 60, 60]
    from rich.segment import Segment

    assert fit([Segment("text"), Segment("     ")], 3) == [[Segment("tex")], [Segment("t")]]
