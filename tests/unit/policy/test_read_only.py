"""Which command lines only read (no "cannot be undone" note for them): fail closed."""

from __future__ import annotations

import pytest

from agentcli.policy.bash.read_only import only_reads


@pytest.mark.parametrize(
    "command", ["ls -la", "ls -la | wc -l", "cat a && head -n 3 b; tail c", "grep -rn x ."]
)
def test_plain_lines_of_reading_programs_only_read(command: str) -> None:
    assert only_reads(command)


@pytest.mark.parametrize(
    "command",
    [
        "",
        "touch x",  # writes
        "ls > x",  # a redirection
        "ls $(touch x)",  # a substitution
        "ls `touch x`",
        "./ls",  # a path: any program
        "git status",  # git writes its index, runs aliases
        "sort -o out in",  # a program that writes with an option
        "ls && rm -rf x",  # one writer in the line
        "find . -delete",  # runs and deletes
        "cat <(touch x)",  # a process substitution
        'ls; python3 -c \'open("x","w")\'',
        "f() { touch x; }; f",
        "ls\ntouch x",
    ],
)
def test_anything_else_may_write(command: str) -> None:
    assert not only_reads(command)
