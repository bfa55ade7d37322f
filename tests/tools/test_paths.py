"""Workspace confinement (tools/paths.py, tools/typed_paths.py, tools/path_globs.py) and the
shared output cap (tools/output.py)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from agentcli_tools.base import ToolError
from agentcli_tools.dir_listing import list_dir
from agentcli_tools.file_reading import read_file
from agentcli_tools.file_writing import write_file
from agentcli_tools.output import cap_output
from agentcli_tools.path_globs import path_matches
from agentcli_tools.paths import locate, resolve_relative
from hypothesis import given, settings
from hypothesis import strategies as st

if TYPE_CHECKING:
    from tests.helpers.tooling import ToolEnv


def resolve_in_workspace(workspace: Path, path: str) -> Path:
    """The real path ``path`` leads to, walked as the tools walk it (or ToolError)."""
    with locate(workspace, path) as found:
        rel = found.rel
    root = workspace.resolve()
    return root if rel == "." else root / rel


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "sub").mkdir(parents=True)
    (tmp_path / "secret.txt").write_text("top secret\n")
    return root


@pytest.mark.parametrize("path", ["a.txt", "sub/a.txt", "./sub/../a.txt", ".", ""])
def test_paths_inside_are_resolved(workspace: Path, path: str) -> None:
    resolved = resolve_in_workspace(workspace, path)
    assert resolved.is_relative_to(workspace.resolve())


def test_absolute_path_inside_is_allowed(workspace: Path) -> None:
    inside = workspace / "sub" / "x.txt"
    assert resolve_in_workspace(workspace, str(inside)) == inside.resolve()


@pytest.mark.parametrize(
    "path", ["../secret.txt", "sub/../../secret.txt", "/etc/passwd", "~", "~/x", "~root/x"]
)
def test_escapes_are_refused(workspace: Path, path: str) -> None:
    with pytest.raises(ToolError, match="outside the workspace"):
        resolve_in_workspace(workspace, path)


def test_message_names_the_path(workspace: Path) -> None:
    with pytest.raises(ToolError) as caught:
        resolve_in_workspace(workspace, "../x")
    assert str(caught.value).startswith("path '../x' is outside the workspace")


def test_nul_byte_is_refused(workspace: Path) -> None:
    with pytest.raises(ToolError, match="NUL"):
        resolve_in_workspace(workspace, "a\x00b")


def test_symlinks_pointing_outside_are_refused(workspace: Path) -> None:
    outside = workspace.parent
    os.symlink(outside / "secret.txt", workspace / "file-link")
    os.symlink(outside, workspace / "dir-link")
    os.symlink(outside / "not-yet-there.txt", workspace / "dangling")
    for path in ["file-link", "dir-link/secret.txt", "dir-link/new.txt", "dangling"]:
        with pytest.raises(ToolError, match="outside the workspace"):
            resolve_in_workspace(workspace, path)


def test_symlink_inside_is_followed(workspace: Path) -> None:
    (workspace / "sub" / "real.txt").write_text("x")
    os.symlink("sub/real.txt", workspace / "alias")
    assert resolve_in_workspace(workspace, "alias") == (workspace / "sub" / "real.txt").resolve()


def test_workspace_given_through_a_symlink(tmp_path: Path, workspace: Path) -> None:
    os.symlink(workspace, tmp_path / "ws-link")
    assert resolve_in_workspace(tmp_path / "ws-link", "sub") == (workspace / "sub").resolve()


def test_file_tools_refuse_escapes(tool_env: ToolEnv) -> None:
    (tool_env.workspace.parent / "secret.txt").write_text("top secret\n")
    os.symlink(tool_env.workspace.parent, tool_env.workspace / "up")
    for args in [{"path": "../secret.txt"}, {"path": "up/secret.txt"}, {"path": "~/.bashrc"}]:
        message = tool_env(read_file, **args)
        assert message.status == "error"
        assert "outside the workspace" in message.content
        assert "top secret" not in message.content
    message = tool_env(write_file, path="up/evil.txt", content="x")
    assert message.status == "error"
    assert not (tool_env.workspace.parent / "evil.txt").exists()


def test_cap_output_leaves_short_text_alone() -> None:
    assert cap_output("hello", 10) == "hello"


@pytest.mark.parametrize("keep", ["head", "ends"])
def test_cap_output_respects_the_limit(keep: str) -> None:
    text = "".join(f"line {n}\n" for n in range(10_000))
    capped = cap_output(text, 1000, keep=keep, hint="narrow it down")  # type: ignore[arg-type]
    assert len(capped) <= 1000
    assert capped.startswith("line 0\n")
    assert f"of {len(text)} characters cut; narrow it down" in capped
    assert capped.endswith("line 9999\n") == (keep == "ends")


def test_cap_output_counts_what_the_caller_already_dropped() -> None:
    capped = cap_output("abc", 1000, keep="ends", already_cut=5000)
    assert "5000 of 5003 characters cut" in capped


@pytest.mark.parametrize("name", ["a" * 5000, "x/" * 3000 + "y", "\udcff\udcfe.txt", "bad\udc80/f"])
def test_very_long_and_non_utf8_names_give_an_error_or_work(tool_env: ToolEnv, name: str) -> None:
    for tool, args in (
        (write_file, {"path": name, "content": "x"}),
        (read_file, {"path": name}),
        (list_dir, {"path": name}),
    ):
        message = tool_env(tool, **args)
        assert isinstance(message.content, str) and message.content
        assert "Traceback" not in message.content


# -- the walk beneath the workspace (tools.paths.locate) and path rules' globs (path_globs) ---


def test_resolve_relative_follows_links_inside_and_keeps_missing_names(workspace: Path) -> None:
    (workspace / "docs").mkdir()
    (workspace / "README.md").write_text("x")
    (workspace / "docs" / "link").symlink_to("../README.md")
    (workspace / "docs" / "up").symlink_to("..")
    assert resolve_relative(workspace, "docs/link") == "README.md"
    assert resolve_relative(workspace, "docs/up/docs/up/README.md") == "README.md"
    assert resolve_relative(workspace, "new/deep/f.txt") == "new/deep/f.txt"
    assert resolve_relative(workspace, f"{workspace}//docs/./link") == "README.md"
    assert resolve_relative(workspace, ".") == "."
    assert resolve_relative(workspace, "docs/..") == "."


@pytest.mark.parametrize(
    "path",
    [
        "docs/up/..",
        "/proc/self/cwd/x",
        "loop",
        "loop/x",
        "new/../x",
        "/",
        "//etc/passwd",
        "../ws/x",
    ],
)
def test_resolve_relative_is_none_where_it_cannot_stay_inside(workspace: Path, path: str) -> None:
    (workspace / "docs").mkdir()
    (workspace / "docs" / "up").symlink_to("..")
    (workspace / "loop").symlink_to("loop")
    assert resolve_relative(workspace, path) is None


def test_link_loops_and_overlong_paths_are_errors(workspace: Path) -> None:
    (workspace / "a").symlink_to("b")
    (workspace / "b").symlink_to("a")
    with pytest.raises(ToolError, match="too many levels of symbolic links"):
        resolve_in_workspace(workspace, "a")
    with pytest.raises(ToolError, match="too long"):
        resolve_in_workspace(workspace, "x/" * 3000)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["..", ".", "", "sub", "up", "in", "x", "/"]), max_size=8))
def test_resolved_paths_never_leave_the_workspace(
    tmp_path_factory: pytest.TempPathFactory, parts: list[str]
) -> None:
    workspace = tmp_path_factory.getbasetemp() / "walk-ws"
    if not workspace.exists():
        (workspace / "sub").mkdir(parents=True)
        (workspace / "up").symlink_to("..")
        (workspace / "in").symlink_to("sub")
        (workspace / "sub" / "up").symlink_to("../..")
    rel = resolve_relative(workspace, "/".join(parts))
    if rel is not None:
        assert not rel.startswith(("/", "..")) and "/../" not in f"/{rel}/"


PATH_GLOBS = [  # (rel, glob, matches as an allow, matches as a deny/ask)
    (".env", ".env", True, True),
    ("sub/.env", ".env", False, True),  # a bare name: any depth, for deny only
    (".ENV", ".env", False, True),  # case: ignored for deny only
    ("docs/a/b.md", "docs/*", True, True),  # fnmatch's * crosses /
    ("README.md", "**/*.md", True, True),  # **/ also matches at the root
    ("docs/x.md", "./docs/*", True, True),
    (".git/hooks/pre-commit", ".git", False, True),  # a folder covers its contents
    (".git/hooks/pre-commit", ".git/", False, True),
    ("src/a.py", "docs/*", False, False),
    ("docsx", "docs", False, False),
]


@pytest.mark.parametrize(("rel", "glob", "allow", "protect"), PATH_GLOBS)
def test_path_matches(rel: str, glob: str, allow: bool, protect: bool) -> None:
    assert path_matches(rel, glob, protect=False) is allow
    assert path_matches(rel, glob, protect=True) is protect
