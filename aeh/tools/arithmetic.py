"""Safe arithmetic for calculator tools: numbers, + - * / and parentheses, by walking the AST.

Suites that offer a calculator call `evaluate_arithmetic`; the engine itself never does. Bad
input raises `ToolInputError`, so it is recorded as the agent's invalid call.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable

from aeh.tools._tools import ToolInputError

__all__ = ["MAX_EXPRESSION_CHARS", "evaluate_arithmetic"]

MAX_EXPRESSION_CHARS = 200  # a calculator, not a compute service: bound the work one call can ask for

_BINARY: dict[type[ast.operator], Callable[[float, float], float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
}
_UNARY: dict[type[ast.unaryop], Callable[[float], float]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}


def evaluate_arithmetic(expression: str, max_chars: int = MAX_EXPRESSION_CHARS) -> float:
    """Evaluate `expression`; anything but numbers, + - * / and parentheses is refused (no eval)."""
    if len(expression) > max_chars:
        raise ToolInputError(f"expression longer than {max_chars} characters")
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except SyntaxError as exc:
        raise ToolInputError(f"not an arithmetic expression: {exc.msg}") from None
    return float(_walk(tree.body))


def _walk(node: ast.AST) -> float:
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return float(node.value)  # type: ignore[arg-type]  # int or float, checked above
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _walk(node.left), _walk(node.right)
        if isinstance(node.op, ast.Div) and right == 0:
            raise ToolInputError("division by zero")
        return float(_BINARY[type(node.op)](left, right))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return float(_UNARY[type(node.op)](_walk(node.operand)))
    raise ToolInputError(f"unsupported syntax: {type(node).__name__} (only numbers, + - * / and parentheses)")
