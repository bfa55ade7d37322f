"""search_files: regex over text files, gitignore, binary files, globs, caps."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from agentcli_tools.search import MAX_RESULTS, search_files

from agentcli.agent.state import RunContext
from agentcli.policy.approval_policy import Policy

if TYPE_CHECKING:
    from tests.helpers.tooling import ToolEnv


@pytest.fixture
def tree(tool_env: ToolEnv) -> Path:
    ws = tool_env.workspace
    files = {
        "src/app.py": "import os\nTODO = 'fix me'\n",
        "src/util.py": "def helper():\n    pass  # TODO later\n",
        "src/notes.md": "TODO: write docs\n",
        "build/out.py": "TODO generated\n",
        "logs/debug.log": "TODO in a log\n",
        "logs/keep.log": "TODO kept by negation\n",
        "pkg/.gitignore": "local.txt\n",
        "pkg/local.txt": "TODO ignored by nested gitignore\n",
        "pkg/other.txt": "TODO visible\n",
        ".git/config": "TODO inside git\n",
        ".gitignore": "build/\n*.log\n!keep.log\n",
    }
    for name, text in files.items():
        (ws / name).parent.mkdir(parents=True, exist_ok=True)
        (ws / name).write_text(text)
    (ws / "src/blob.bin").write_bytes(b"TODO\x00\x01\x02")
    return ws


def matched_files(content: str) -> set[str]:
    return {line.split(":")[0] for line in content.splitlines() if not line.startswith("[")}


def test_results_are_path_line_text(tool_env: ToolEnv, tree: Path) -> None:
    message = tool_env(search_files, pattern=r"TODO = ")
    assert message.status == "success"
    assert message.content.splitlines() == ["src/app.py:2: TODO = 'fix me'", "[1 match]"]


def test_gitignore_git_dir_and_binary_files_are_skipped(tool_env: ToolEnv, tree: Path) -> None:
    content = tool_env(search_files, pattern="TODO").content
    assert matched_files(content) == {
        "src/app.py",
        "src/util.py",
        "src/notes.md",
        "logs/keep.log",
        "pkg/other.txt",
    }


def test_glob_filters_names_and_paths(tool_env: ToolEnv, tree: Path) -> None:
    assert matched_files(tool_env(search_files, pattern="TODO", glob="*.py").content) == {
        "src/app.py",
        "src/util.py",
    }
    by_path = tool_env(search_files, pattern="TODO", path="src", glob="u*.py").content
    assert matched_files(by_path) == {"src/util.py"}


def test_single_file_and_case_insensitive(tool_env: ToolEnv, tree: Path) -> None:
    content = tool_env(search_files, pattern="(?i)todo: WRITE", path="src/notes.md").content
    assert content.splitlines()[0] == "src/notes.md:1: TODO: write docs"


def test_no_match_and_bad_pattern(tool_env: ToolEnv, tree: Path) -> None:
    assert tool_env(search_files, pattern="nothing-like-this").content.startswith("no matches")
    message = tool_env(search_files, pattern="([unclosed")
    assert message.status == "error" and "invalid regular expression" in message.content


def test_results_are_capped_with_total(tool_env: ToolEnv) -> None:
    (tool_env.workspace / "many.txt").write_text("hit\n" * (MAX_RESULTS + 50))
    lines = tool_env(search_files, pattern="hit").content.splitlines()
    assert len(lines) == MAX_RESULTS + 1
    assert (
        lines[-1]
        == f"[{MAX_RESULTS} of {MAX_RESULTS + 50} matches shown; narrow the pattern, path or glob]"
    )


def test_search_stays_in_the_workspace(tool_env: ToolEnv, tree: Path) -> None:
    (tool_env.workspace.parent / "outside.txt").write_text("TODO outside\n")
    (tree / "escape.txt").symlink_to(tool_env.workspace.parent / "outside.txt")
    assert "outside" not in tool_env(search_files, pattern="TODO").content
    message = tool_env(search_files, pattern="TODO", path="..")
    assert message.status == "error" and "outside the workspace" in message.content


def test_output_is_capped_by_the_context(tool_env: ToolEnv) -> None:
    tool_env.context.max_output_chars = 1000
    (tool_env.workspace / "wide.txt").write_text(("hit " + "x" * 500 + "\n") * 50)
    content = tool_env(search_files, pattern="hit").content
    assert len(content) <= 1000
    assert "characters cut" in content
    assert content.splitlines()[0] == "wide.txt:1: hit " + "x" * (300 - 4)


def test_hard_links_linked_folders_and_protected_paths_are_skipped(tool_env: ToolEnv) -> None:
    ws = tool_env.workspace
    outside = ws.parent / "outside"
    outside.mkdir()
    (outside / "o.txt").write_text("TODO outside\n")
    os.link(outside / "o.txt", ws / "hard.txt")
    (ws / "out-dir").symlink_to(outside)
    (ws / ".env").write_text("TODO secret\n")
    (ws / "secrets").mkdir()
    (ws / "secrets" / "key.txt").write_text("TODO key\n")
    (ws / "sub").mkdir()
    (ws / "sub" / ".ENV").write_text("TODO secret too\n")
    (ws / "plain.txt").write_text("TODO plain\n")
    (ws / "alias.txt").symlink_to("plain.txt")
    rules = [{"tool": "read_file", "match": m, "decision": "deny"} for m in (".env", "secrets")]
    tool_env.context = RunContext(workspace=ws, policy=Policy.build(rules=rules))
    content = tool_env(search_files, pattern="TODO").content
    assert matched_files(content) == {"plain.txt"}  # the link shows where it leads
    assert content.splitlines()[-1] == "[2 matches]"
    direct = tool_env(search_files, pattern="TODO", path="secrets").content
    assert direct.startswith("no matches")
