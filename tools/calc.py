"""calculator: arithmetic and math-module functions, evaluated by walking the syntax tree."""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable
from typing import Any

from .base import Runtime, ToolError, builtin_tool, context_of
from .output import cap_output

MAX_EXPRESSION_CHARS = 1000
MAX_INT_BITS = 14_000  # about 4,200 digits: Python refuses to print longer ints anyway
MAX_COMBINATORIC_ARG = 5000  # factorial, comb, perm grow too fast beyond this

OPERATORS: dict[type[ast.AST], Callable[..., Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
}
CONSTANTS = {"pi": math.pi, "e": math.e, "tau": math.tau, "inf": math.inf, "nan": math.nan}
FUNCTIONS: dict[str, Callable[..., Any]] = {
    name: value
    for name, value in vars(math).items()
    if callable(value) and not name.startswith("_")
} | {"abs": abs, "round": round, "min": min, "max": max}
HELP = "use numbers, + - * / // % **, parentheses, and math functions such as sqrt(2) or log(8, 2)"


def _too_big(value: Any) -> bool:
    return isinstance(value, int) and value.bit_length() > MAX_INT_BITS


def _product_too_big(left: Any, right: Any) -> bool:
    if not (isinstance(left, int) and isinstance(right, int)):
        return False
    return left.bit_length() + right.bit_length() > MAX_INT_BITS


def _power(base: Any, exponent: Any) -> Any:
    exact = isinstance(base, int) and isinstance(exponent, int) and abs(base) > 1
    if exact and exponent * math.log2(abs(base)) > MAX_INT_BITS:
        raise ToolError(f"{base} ** {exponent} is too large to compute exactly")
    return operator.pow(base, exponent)


def _call(name: str, args: list[Any]) -> Any:
    if name in ("factorial", "comb", "perm") and any(
        isinstance(arg, int) and arg > MAX_COMBINATORIC_ARG for arg in args
    ):
        raise ToolError(f"{name} is limited to arguments up to {MAX_COMBINATORIC_ARG}")
    return FUNCTIONS[name](*args)


def _math_attribute(node: ast.AST) -> str | None:
    """``x`` for ``math.x``, else None."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return node.attr if node.value.id == "math" else None
    return None


def _function_name(node: ast.expr) -> str:
    name = node.id if isinstance(node, ast.Name) else _math_attribute(node)
    if name in FUNCTIONS:
        return name
    raise ToolError(f"calling '{ast.unparse(node)}' is not allowed; {HELP}")


def _number(node: ast.AST) -> Any:
    """Evaluate an operand: lists are only allowed as function arguments, e.g. fsum([...])."""
    value = _evaluate(node)
    if isinstance(value, list):
        raise ToolError(f"'{ast.unparse(node)}' is a list; operators only work on numbers")
    return value


def _evaluate(node: ast.AST) -> Any:
    if isinstance(node, ast.Expression):
        return _evaluate(node.body)
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    name = node.id if isinstance(node, ast.Name) else _math_attribute(node)
    if name in CONSTANTS:
        return CONSTANTS[name]
    if isinstance(node, ast.UnaryOp) and type(node.op) in OPERATORS:
        return OPERATORS[type(node.op)](_number(node.operand))
    if isinstance(node, ast.BinOp) and type(node.op) in OPERATORS:
        left, right = _number(node.left), _number(node.right)
        if isinstance(node.op, ast.Pow):
            return _power(left, right)
        if isinstance(node.op, ast.Mult) and _product_too_big(left, right):
            raise ToolError("the result is too large to compute exactly")
        return OPERATORS[type(node.op)](left, right)
    if isinstance(node, ast.Call) and not node.keywords:
        result = _call(_function_name(node.func), [_evaluate(arg) for arg in node.args])
        if _too_big(result):
            raise ToolError("the result is too large to compute exactly")
        return result
    if isinstance(node, (ast.Tuple, ast.List)):
        return [_evaluate(item) for item in node.elts]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitXor):
        raise ToolError("'^' is not a power here; use ** (e.g. 2**10)")
    raise ToolError(f"'{ast.unparse(node)}' is not allowed; {HELP}")


@builtin_tool
def calculator(expression: str, runtime: Runtime) -> str:
    """Evaluate an arithmetic expression exactly like Python would, and return the result.

    Supports + - * / // % ** and parentheses, the constants pi, e, tau, inf, and the functions
    of Python's math module (sqrt, log, sin, factorial, ...) plus abs, round, min and max.

    Args:
        expression: The expression, e.g. '2 * (3 + 4) ** 2' or 'sqrt(2) * log(100, 10)'.
    """
    if len(expression) > MAX_EXPRESSION_CHARS:
        raise ToolError(f"the expression is longer than {MAX_EXPRESSION_CHARS} characters")
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except SyntaxError as exc:
        raise ToolError(f"not a valid expression: {exc.msg}; {HELP}") from exc
    try:
        result = _evaluate(tree)
    except ToolError:
        raise
    except ZeroDivisionError:
        raise ToolError("division by zero") from None
    except (ArithmeticError, ValueError, TypeError, RecursionError, MemoryError) as exc:
        raise ToolError(f"cannot evaluate {expression!r}: {exc}") from exc
    if isinstance(result, list):
        raise ToolError(f"the result is a list, not a number; {HELP}")
    if _too_big(result):
        raise ToolError("the result is too large to show exactly")
    return cap_output(str(result), context_of(runtime).max_output_chars)
