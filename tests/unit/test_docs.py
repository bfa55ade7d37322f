"""The documentation says what the code does: every test docs/guarantees.md names exists,
the exit codes and slash commands docs/usage.md lists are the code's, every `agentcli`
command line in the docs uses flags that command takes, and no document points to a file
users do not have (../shared/)."""

from __future__ import annotations

import ast
import re
from functools import cache

import click
import pytest
import typer

from agentcli.errors import ExitCode
from tests.helpers import ROOT

DOCS = sorted(
    ["README.md", "bench/README.md", "config.example.toml"]
    + [str(path.relative_to(ROOT)) for path in (ROOT / "docs").glob("*.md")]
)


@cache
def defined_in(path: str) -> frozenset[str]:
    """The names a test module defines at its top level: functions, classes, constants."""
    tree = ast.parse((ROOT / path).read_text(), path)
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return frozenset(names)


def test_every_test_the_guarantees_name_exists() -> None:
    """`tests/x.py::name`, or `::name` after a file named earlier in the same table cell."""
    missing = []
    for number, line in enumerate((ROOT / "docs/guarantees.md").read_text().splitlines(), 1):
        for cell in line.split(" | "):
            last = None
            for ref in re.findall(r"`([^`]*)`", cell):
                found = re.fullmatch(r"((?:tests|agentcli|tools|bench)/[\w/.-]*)?(?:::(\w+))?", ref)
                if not found or not any(found.groups()):
                    continue
                path, name = found.groups()
                if path:
                    if not (ROOT / path).exists():
                        missing.append(f"line {number}: {path}")
                        continue
                    last = path if path.endswith(".py") else last
                if name and (last is None or name not in defined_in(last)):
                    missing.append(f"line {number}: {last or '(no file before it)'}::{name}")
    assert not missing, "docs/guarantees.md names what does not exist:\n" + "\n".join(missing)


def test_the_exit_codes_in_the_usage_are_the_codes() -> None:
    text = (ROOT / "docs/usage.md").read_text()
    (listed,) = re.findall(r"^- Exit codes: (.*?)\.", text, re.M | re.S)
    said = {int(code) for code in re.findall(r"\b(\d+) [a-zA-Z]", listed)}
    assert said == {int(code) for code in ExitCode}


def test_the_slash_commands_in_the_usage_are_the_chats() -> None:
    from agentcli.cli.slash_commands import HANDLERS

    text = (ROOT / "docs/usage.md").read_text()
    table = text.split("Slash commands", 1)[1].split("\n\n")[1]
    listed = {name for row in table.splitlines()[2:] for name in re.findall(r"`(/\w+)", row)}
    assert listed == set(HANDLERS)


def commands() -> dict[str, click.Command]:
    """Every command and subcommand, by its words after `agentcli`."""
    from agentcli.cli import app

    found: dict[str, click.Command] = {}

    def walk(command: click.Command, words: tuple[str, ...]) -> None:
        found[" ".join(words)] = command
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, (*words, name))

    walk(typer.main.get_command(app), ())
    return found


def flags(command: click.Command) -> set[str]:
    return {
        flag
        for param in command.params
        for flag in (*getattr(param, "opts", ()), *getattr(param, "secondary_opts", ()))
    } | {"--help", "-h"}


@pytest.mark.parametrize("doc", DOCS)
def test_every_command_line_in_the_docs_uses_flags_its_command_takes(doc: str) -> None:
    known = commands()
    wrong = []
    for number, line in enumerate((ROOT / doc).read_text().splitlines(), 1):
        for tail in re.findall(r"\bagentcli((?: [^`#;|&)\n]*)?)", line):
            words = tail.split()
            path: tuple[str, ...] = ()
            while words[len(path) : len(path) + 1] and " ".join((*path, words[len(path)])) in known:
                path = (*path, words[len(path)])
            takes = flags(known[" ".join(path)]) | flags(known[""])
            for word in words[len(path) :]:
                flag = re.sub(r"[=/,.:)'\"].*$", "", word)
                if re.fullmatch(r"--?[a-zA-Z][\w-]*", flag) and flag not in takes:
                    wrong.append(f"line {number}: agentcli {' '.join(path)} {flag}")
    assert not wrong, f"{doc}:\n" + "\n".join(wrong)


@pytest.mark.parametrize("doc", DOCS)
def test_no_document_points_to_a_file_users_do_not_have(doc: str) -> None:
    assert "../shared/" not in (ROOT / doc).read_text()


def test_ci_runs_the_readmes_test_command_step_by_step() -> None:
    readme = (ROOT / "README.md").read_text()
    command = readme.split("# install and run the tests\n", 1)[1].splitlines()[0]
    steps = command.split(" && ")
    # a step's line in .ci/run is the step, or the step and what its exit status goes to
    ci = [line.strip().split(" || ")[0] for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    at = [ci.index(step) if step in ci else -1 for step in steps]
    assert -1 not in at and at == sorted(at), (steps, ".ci/run runs other commands")
    assert steps[-1].startswith(".venv/bin/pytest")
