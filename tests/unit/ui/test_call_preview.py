"""What the review shows: a diff for file writes and edits, the command, or the arguments."""

from __future__ import annotations

from pathlib import Path

from agentcli.ui.call_preview import preview


def test_write_file_diff_against_the_file_as_it_is(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo\n")
    shown = preview("write_file", {"path": "a.txt", "content": "one\n2\n"}, tmp_path)
    assert shown.kind == "diff"
    assert "-two\n" in shown.text and "+2\n" in shown.text and "--- a/a.txt" in shown.text


def test_new_file_shows_its_content(tmp_path: Path) -> None:
    shown = preview("write_file", {"path": "new/b.txt", "content": "hello"}, tmp_path)
    assert shown.kind == "diff" and "--- /dev/null" in shown.text and "+hello\n" in shown.text


def test_edit_file_diff(tmp_path: Path) -> None:
    (tmp_path / "c.py").write_text("x = 1\ny = 2\n")
    shown = preview(
        "edit_file", {"path": "c.py", "old_text": "y = 2", "new_text": "y = 3"}, tmp_path
    )
    assert shown.kind == "diff" and "-y = 2\n" in shown.text and "+y = 3\n" in shown.text


def test_an_edit_that_would_fail_and_an_escape_show_the_arguments(tmp_path: Path) -> None:
    (tmp_path / "c.py").write_text("a\na\n")
    ambiguous = preview("edit_file", {"path": "c.py", "old_text": "a", "new_text": "b"}, tmp_path)
    assert ambiguous.kind == "json"
    outside = preview("write_file", {"path": "../x", "content": "y"}, tmp_path)
    assert outside.kind == "json" and '"../x"' in outside.text


def test_shell_shows_the_command_and_others_json(tmp_path: Path) -> None:
    assert preview("shell", {"command": "ls -la"}, tmp_path).text == "ls -la"
    assert (
        preview("shell", {"command": "sleep 9", "timeout": 5}, tmp_path).text
        == 'sleep 9\n# {"timeout": 5}'
    )
    shown = preview("calculator", {"expression": "1+1"}, tmp_path)
    assert shown.kind == "json" and '"expression": "1+1"' in shown.text
