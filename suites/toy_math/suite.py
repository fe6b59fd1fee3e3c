"""toy_math: three arithmetic tasks, one calculator tool, one invariant.

It exists to prove the engine is domain-blind: nothing here is about workspaces, HTTP or SQL.
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel, Field

from aeh.plugins import ToolEnv, ToolRegistry, TraceView, evaluate_arithmetic, extract_last_number

name = "toy_math"
tools = ToolRegistry()


class CalculatorArgs(BaseModel):
    expression: str = Field(description="Arithmetic using numbers, + - * / and parentheses, e.g. '(2 + 3) * 4'.")


@tools.tool("calculator", params=CalculatorArgs, blocking=False)  # pure arithmetic: no thread hand-off
def calculator(args: CalculatorArgs, env: ToolEnv) -> dict[str, Any]:
    """Evaluate an arithmetic expression (numbers, + - * / and parentheses)."""
    return {"expression": args.expression, "result": evaluate_arithmetic(args.expression)}


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
