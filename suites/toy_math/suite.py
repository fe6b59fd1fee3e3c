"""toy_math: three arithmetic tasks, one calculator tool, one invariant.

It exists to prove the engine is domain-blind: nothing here is about workspaces, HTTP or SQL.
"""

from __future__ import annotations

import ast
import math
import operator
from typing import Any

from pydantic import BaseModel, Field

from aeh.grading.outcome import extract_last_number
from aeh.models import TraceView
from aeh.tools.registry import ToolEnv, ToolInputError, ToolRegistry

name = "toy_math"
tools = ToolRegistry()

_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}
_UNARY = {ast.UAdd: operator.pos, ast.USub: operator.neg}
_MAX_CHARS = 200  # a calculator, not a compute service: bound the work one call can ask for


def evaluate(expression: str) -> float:
    """Evaluate + - * / ( ) over numbers by walking the AST; anything else is refused (no eval)."""
    if len(expression) > _MAX_CHARS:
        raise ToolInputError(f"expression longer than {_MAX_CHARS} characters")
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except SyntaxError as exc:
        raise ToolInputError(f"not an arithmetic expression: {exc.msg}") from None
    return float(_walk(tree.body))


def _walk(node: ast.AST) -> float:
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _walk(node.left), _walk(node.right)
        if isinstance(node.op, ast.Div) and right == 0:
            raise ToolInputError("division by zero")
        return _BINARY[type(node.op)](left, right)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_walk(node.operand))
    raise ToolInputError(f"unsupported syntax: {type(node).__name__} (only numbers, + - * / and parentheses)")


class CalculatorArgs(BaseModel):
    expression: str = Field(description="Arithmetic using numbers, + - * / and parentheses, e.g. '(2 + 3) * 4'.")


@tools.tool("calculator", params=CalculatorArgs)
def calculator(args: CalculatorArgs, env: ToolEnv) -> dict[str, Any]:
    """Evaluate an arithmetic expression (numbers, + - * / and parentheses)."""
    return {"expression": args.expression, "result": evaluate(args.expression)}


def answer_from_calculator(trace: TraceView) -> tuple[bool, str] | bool:
    """The number the agent answers must be one a calculator call produced (no mental math).

    Passes vacuously when the answer holds no number: the outcome graders judge that.
    """
    answer = extract_last_number(trace.final_output)
    if answer is None:
        return True
    results = [
        float(c.result["result"]) for c in trace.tool_calls
        if c.name == "calculator" and c.ok and isinstance(c.result, dict) and "result" in c.result
    ]
    # The answer may be rounded for display (16.583333 → 16.58), so allow the rounding of a result.
    if any(math.isclose(answer, r, abs_tol=0.005 + 1e-9) for r in results):
        return True
    return False, f"answer {answer} matches no calculator result ({results or 'no calculator calls'})"


invariants = {"answer_from_calculator": answer_from_calculator}
