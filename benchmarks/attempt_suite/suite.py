"""attempt_cost: the two shapes of attempt whose harness CPU `benchmarks/attempt_cpu.py` measures.

`one_turn` has no tools: the agent answers. `tool_loop` has one pure tool (`blocking=False`: no
worker thread, no file), called once between two model turns. Both are graded by an exact match,
`tool_loop` also by its tool sequence, and every trajectory scorer runs on both.
"""

from __future__ import annotations

from pydantic import BaseModel

from aeh.tools._tools import ToolEnv, ToolRegistry

name = "attempt_cost"
tools = ToolRegistry()


class AddArgs(BaseModel):
    a: int
    b: int


@tools.tool("add", params=AddArgs, blocking=False)
def add(args: AddArgs, env: ToolEnv) -> int:
    """Add two integers."""
    return args.a + args.b
