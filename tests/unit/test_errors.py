"""errors.exit_code_for: each error class agentcli raises ends the command with its exit code
(docs/usage.md, "Exit codes"; tests/unit/test_docs.py checks the list), mapped in one place."""

from __future__ import annotations

import ast
import importlib

from agentcli.errors import ConfigError, ExitCode, exit_code_for
from tests.helpers import ROOT

# every AgentcliError subclass in agentcli's sources, and the code it ends a command with
EXPECTED = {
    "AgentcliError": ExitCode.ERROR,
    "UsageError": ExitCode.USAGE,
    "ConfigError": ExitCode.USAGE,
    "ThreadNotFound": ExitCode.USAGE,
    "SetupNeeded": ExitCode.USAGE,
    "ThreadBusy": ExitCode.ERROR,
    "ModelError": ExitCode.ERROR,
    "RunStopped": ExitCode.ERROR,
    "Interrupted": ExitCode.INTERRUPTED,
    "AnswerStopped": ExitCode.INTERRUPTED,
    "SnapshotError": ExitCode.ERROR,
    "ChangedSince": ExitCode.ERROR,
    "HookBlocked": ExitCode.ERROR,  # a UserPromptSubmit hook kept the message unsent
}


def error_classes() -> dict[str, type[BaseException]]:
    """Every subclass of AgentcliError defined in agentcli, found by reading the sources (so
    a new one is found without its module being imported anywhere first)."""
    defined: list[tuple[str, str, set[str]]] = []
    for path in (ROOT / "agentcli").rglob("*.py"):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ClassDef):
                bases = {ast.unparse(base).rsplit(".", 1)[-1] for base in node.bases}
                defined.append((module, node.name, bases))
    errors = {"AgentcliError": "agentcli.errors"}
    while new := {
        name: module
        for module, name, bases in defined
        if bases & errors.keys() and name not in errors
    }:
        errors |= new
    return {name: getattr(importlib.import_module(module), name) for name, module in errors.items()}


def test_each_error_class_ends_the_command_with_its_exit_code() -> None:
    classes = error_classes()
    assert sorted(classes) == sorted(EXPECTED)  # a new error class: say its code here
    for name, cls in classes.items():
        error = cls.__new__(cls)  # the code follows the class alone; constructors differ
        assert exit_code_for(error) is EXPECTED[name], name


def test_the_nearest_class_decides_and_a_bug_is_a_runtime_error() -> None:
    class Mine(ConfigError):
        pass

    assert exit_code_for(Mine("x")) is ExitCode.USAGE
    assert exit_code_for(ValueError("a bug")) is ExitCode.ERROR


def test_the_codes_are_the_contracts() -> None:
    codes = {code.name: code.value for code in ExitCode}
    assert codes == {"OK": 0, "ERROR": 1, "USAGE": 2, "AWAITING_REVIEW": 3, "INTERRUPTED": 130}
