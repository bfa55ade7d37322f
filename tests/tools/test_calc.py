"""calculator: arithmetic over the syntax tree, never eval."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from agentcli_tools.calc import calculator

if TYPE_CHECKING:
    from tests.helpers.tooling import ToolEnv


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("2 * (3 + 4) ** 2", "98"),
        ("7 // 2 + 7 % 2", "4"),
        ("1 / 4", "0.25"),
        ("-2 ** 2", "-4"),
        ("sqrt(16) + math.floor(2.7)", "6.0"),
        ("log(8, 2)", "3.0"),
        ("math.pi", "3.141592653589793"),
        ("max(1, 5, 3) - abs(-2)", "3"),
        ("factorial(20)", "2432902008176640000"),
        ("fsum([0.1, 0.2, 0.3])", "0.6"),
        ("2 ** 100", "1267650600228229401496703205376"),
    ],
)
def test_evaluates(tool_env: ToolEnv, expression: str, expected: str) -> None:
    message = tool_env(calculator, expression=expression)
    assert message.status == "success"
    assert message.content == expected


@pytest.mark.parametrize(
    "expression",
    [
        "__import__('os').system('echo hi')",
        "os.system('ls')",
        "open('/etc/passwd')",
        "math.__dict__",
        "(1).__class__",
        "x + 1",
        "[c for c in 'ab']",
        "lambda: 1",
        "sqrt(x=4)",
        "'a' * 3",
    ],
)
def test_refuses_names_attributes_and_calls(tool_env: ToolEnv, expression: str) -> None:
    message = tool_env(calculator, expression=expression)
    assert message.status == "error"
    assert "not allowed" in message.content


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("10 ** 10 ** 10", "too large"),
        ("9 ** 999999", "too large"),
        ("(10 ** 4000) * (10 ** 4000) * (10 ** 4000) * (10 ** 4000)", "too large"),
        ("factorial(10 ** 6)", "limited"),
        ("2.0 ** 5000", "cannot evaluate"),
        ("1 / 0", "division by zero"),
        ("sqrt(-1)", "math domain error"),
        ("2 ^ 10", "use **"),
        ("[1] * 10 ** 9", "is a list"),
        ("fsum([1, 2]) + [3]", "is a list"),
        ("[1, 2]", "not a number"),
        ("1 +", "not a valid expression"),
        ("1" * 2000, "longer than"),
    ],
)
def test_guards(tool_env: ToolEnv, expression: str, expected: str) -> None:
    message = tool_env(calculator, expression=expression)
    assert message.status == "error"
    assert expected in message.content


def test_deep_nesting_does_not_crash(tool_env: ToolEnv) -> None:
    assert tool_env(calculator, expression="-" * 200 + "1").content == "1"
    deepest = tool_env(calculator, expression="-" * 999 + "1")
    assert deepest.content == "-1" or "cannot evaluate" in deepest.content
