"""read_file, write_file, edit_file and list_dir, called through a ToolNode."""

from __future__ import annotations

import os
import stat
import tracemalloc
from typing import TYPE_CHECKING

import pytest
from agentcli_tools.dir_listing import list_dir
from agentcli_tools.file_reading import read_file
from agentcli_tools.file_writing import edit_file, write_file

if TYPE_CHECKING:
    from tests.helpers.tooling import ToolEnv


def test_read_file_numbers_lines(tool_env: ToolEnv) -> None:
    (tool_env.workspace / "a.txt").write_text("alpha\nbeta\ngamma\n")
    message = tool_env(read_file, path="a.txt")
    assert message.status == "success"
    assert message.content == "     1\talpha\n     2\tbeta\n     3\tgamma"


def test_read_file_offset_and_limit(tool_env: ToolEnv) -> None:
    (tool_env.workspace / "a.txt").write_text("".join(f"l{n}\n" for n in range(1, 11)))
    content = tool_env(read_file, path="a.txt", offset=4, limit=2).content
    assert content.splitlines() == [
        "     4\tl4",
        "     5\tl5",
        "[lines 4-5 of 10 shown; call read_file with offset=6 to read on]",
    ]


def test_read_file_offset_past_end(tool_env: ToolEnv) -> None:
    (tool_env.workspace / "a.txt").write_text("one\n")
    message = tool_env(read_file, path="a.txt", offset=5)
    assert message.status == "error"
    assert "past the end" in message.content and "(1 line)" in message.content


def test_read_file_long_file_is_cut_with_offset_hint(tool_env: ToolEnv) -> None:
    tool_env.context.max_output_chars = 2000
    (tool_env.workspace / "big.txt").write_text("".join(f"line {n}\n" for n in range(1, 5001)))
    content = tool_env(read_file, path="big.txt").content
    assert len(content) <= 2000
    last_line = content.splitlines()[-1]
    assert last_line.startswith("[lines 1-") and "of 5000 shown" in last_line
    shown = int(last_line.split("-")[1].split(" ")[0])
    assert f"offset={shown + 1}" in last_line
    next_part = tool_env(read_file, path="big.txt", offset=shown + 1, limit=1).content
    assert next_part.startswith(f"{shown + 1:6}\tline {shown + 1}")


def test_read_file_one_huge_line_is_cut(tool_env: ToolEnv) -> None:
    tool_env.context.max_output_chars = 1000
    (tool_env.workspace / "min.js").write_text("x" * 50_000 + "\nsecond\n")
    content = tool_env(read_file, path="min.js").content
    assert len(content) <= 1000
    assert "line cut" in content and "offset=2" in content


def test_read_file_refuses_binary(tool_env: ToolEnv) -> None:
    (tool_env.workspace / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    message = tool_env(read_file, path="img.png")
    assert message.status == "error"
    assert message.content.startswith("Error: 'img.png' is a binary file")


@pytest.mark.parametrize(
    ("setup", "expected"), [(None, "does not exist"), ("dir", "is not a file")]
)
def test_read_file_missing_or_directory(
    tool_env: ToolEnv, setup: str | None, expected: str
) -> None:
    if setup == "dir":
        (tool_env.workspace / "thing").mkdir()
    message = tool_env(read_file, path="thing")
    assert message.status == "error" and expected in message.content


def test_write_file_creates_parents_then_overwrites(tool_env: ToolEnv) -> None:
    message = tool_env(write_file, path="new/deep/f.txt", content="one\ntwo\n")
    assert message.status == "success"
    assert message.content == "created 'new/deep/f.txt' (2 lines, 8 bytes)"
    assert (tool_env.workspace / "new/deep/f.txt").read_text() == "one\ntwo\n"
    message = tool_env(write_file, path="new/deep/f.txt", content="é")
    assert message.content == "overwrote 'new/deep/f.txt' (1 line, 2 bytes)"


def test_write_file_keeps_line_endings(tool_env: ToolEnv) -> None:
    tool_env(write_file, path="crlf.txt", content="a\r\nb\r\n")
    assert (tool_env.workspace / "crlf.txt").read_bytes() == b"a\r\nb\r\n"


def test_write_file_absolute_path_inside(tool_env: ToolEnv) -> None:
    target = tool_env.workspace / "abs.txt"
    assert tool_env(write_file, path=str(target), content="x").status == "success"
    assert target.read_text() == "x"


def test_edit_file_replaces_the_single_occurrence(tool_env: ToolEnv) -> None:
    target = tool_env.workspace / "code.py"
    target.write_bytes(b"def f():\r\n    return 1\r\n")
    message = tool_env(edit_file, path="code.py", old_text="return 1", new_text="return 2")
    assert message.status == "success"
    assert message.content == "edited 'code.py' at line 2: replaced 1 line with 1"
    assert target.read_bytes() == b"def f():\r\n    return 2\r\n"


def test_edit_file_counts_occurrences(tool_env: ToolEnv) -> None:
    (tool_env.workspace / "a.txt").write_text("x = 1\nx = 1\nx = 1\n")
    message = tool_env(edit_file, path="a.txt", old_text="x = 1", new_text="x = 2")
    assert message.status == "error"
    assert "occurs 3 times" in message.content
    missing = tool_env(edit_file, path="a.txt", old_text="y = 1", new_text="")
    assert missing.status == "error" and "not found" in missing.content
    assert (tool_env.workspace / "a.txt").read_text() == "x = 1\nx = 1\nx = 1\n"


def test_edit_file_keeps_bytes_that_are_not_utf8(tool_env: ToolEnv) -> None:
    target = tool_env.workspace / "latin1.txt"
    target.write_bytes(b"caf\xe9 = 1\n")
    message = tool_env(edit_file, path="latin1.txt", old_text="= 1", new_text="= 2")
    assert message.status == "success"
    assert target.read_bytes() == b"caf\xe9 = 2\n"


def test_list_dir_sorted_with_kinds_and_sizes(tool_env: ToolEnv) -> None:
    ws = tool_env.workspace
    (ws / "b.txt").write_text("12345")
    (ws / "A.md").write_text("")
    (ws / "zdir").mkdir()
    (ws / "adir").mkdir()
    (ws / "link").symlink_to("b.txt")
    lines = tool_env(list_dir).content.splitlines()
    assert lines[0] == ".: 5 entries"
    assert [line.split()[0] for line in lines[1:]] == ["dir", "dir", "file", "file", "link"]
    assert lines[1].endswith("adir/") and lines[2].endswith("zdir/")
    assert lines[3].split() == ["file", "0", "A.md"]
    assert lines[4].split() == ["file", "5", "b.txt"]
    assert lines[5].endswith("link -> b.txt")


def test_list_dir_is_capped(tool_env: ToolEnv) -> None:
    for n in range(600):
        (tool_env.workspace / f"f{n:03}").write_text("")
    lines = tool_env(list_dir, path=".").content.splitlines()
    assert lines[0] == ".: 600 entries"
    assert lines[-1] == "[... 100 more entries not shown]"
    assert len(lines) == 502


def test_list_dir_errors(tool_env: ToolEnv) -> None:
    (tool_env.workspace / "f.txt").write_text("")
    assert "is not a directory" in tool_env(list_dir, path="f.txt").content
    assert "outside the workspace" in tool_env(list_dir, path="..").content


# -- hard links, links at the last name, atomic writes, bounded reads ------------------------


def test_hard_linked_files_are_neither_read_nor_changed(tool_env: ToolEnv) -> None:
    outside = tool_env.workspace.parent / "outside.txt"
    outside.write_text("outside secret\n")
    os.link(outside, tool_env.workspace / "hl.txt")
    for tool, args in (
        (read_file, {"path": "hl.txt"}),
        (write_file, {"path": "hl.txt", "content": "pwned"}),
        (edit_file, {"path": "hl.txt", "old_text": "outside", "new_text": "pwned"}),
    ):
        message = tool_env(tool, **args)
        assert message.status == "error"
        assert "has 2 hard links" in message.content and "outside secret" not in message.content
    assert outside.read_text() == "outside secret\n"


def test_a_link_inside_is_written_through_and_stays_a_link(tool_env: ToolEnv) -> None:
    ws = tool_env.workspace
    (ws / "README.md").write_text("old\n")
    (ws / "docs").mkdir()
    (ws / "docs" / "link").symlink_to("../README.md")
    message = tool_env(write_file, path="docs/link", content="new\n")
    assert message.content == "overwrote 'README.md' (1 line, 4 bytes)"
    assert (ws / "docs" / "link").is_symlink() and (ws / "README.md").read_text() == "new\n"
    edited = tool_env(edit_file, path="docs/link", old_text="new", new_text="newer")
    assert edited.status == "success" and (ws / "README.md").read_text() == "newer\n"


def test_a_link_to_outside_at_the_last_name_is_refused(tool_env: ToolEnv) -> None:
    outside = tool_env.workspace.parent / "target.txt"
    outside.write_text("keep\n")
    (tool_env.workspace / "out").symlink_to(outside)
    message = tool_env(write_file, path="out", content="pwned")
    assert message.status == "error" and "outside the workspace" in message.content
    assert outside.read_text() == "keep\n" and (tool_env.workspace / "out").is_symlink()


def test_write_is_atomic_and_keeps_the_mode(tool_env: ToolEnv) -> None:
    target = tool_env.workspace / "run.sh"
    target.write_text("echo old\n")
    target.chmod(0o750)
    assert tool_env(write_file, path="run.sh", content="echo new\n").status == "success"
    assert target.read_text() == "echo new\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o750
    assert sorted(p.name for p in tool_env.workspace.iterdir()) == ["run.sh"]  # no temp left


def test_a_fifo_is_refused_without_blocking(tool_env: ToolEnv) -> None:
    os.mkfifo(tool_env.workspace / "pipe")
    message = tool_env(read_file, path="pipe")
    assert message.status == "error" and "not a regular file" in message.content


def test_read_file_memory_is_bounded_on_one_huge_line(tool_env: ToolEnv) -> None:
    tool_env.context.max_output_chars = 10_000
    with (tool_env.workspace / "huge.txt").open("w") as handle:
        for _ in range(20):
            handle.write("x" * 1_000_000)
        handle.write("\nlast line, no newline")
    tracemalloc.start()
    try:
        content = tool_env(read_file, path="huge.txt").content
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 3_000_000, peak  # the file is 20 MB
    assert "line cut at" in content
    assert content.splitlines()[-1].startswith(
        "[lines 1-1 of 2 shown; call read_file with offset=2"
    )
    assert tool_env(read_file, path="huge.txt", offset=2).content == "     2\tlast line, no newline"
