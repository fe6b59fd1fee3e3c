"""The adapter contract: what the engine calls to drive the agent under test.

It lives in the engine because the engine is its caller; concrete adapters (`aeh.adapters`)
sit above and implement it.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from aeh.engine.context import AttemptContext
from aeh.models import AgentOutcome, Task

__all__ = ["Adapter"]


@runtime_checkable
class Adapter(Protocol):
    """Drives the agent under test through one attempt. It never grades.

    Tool calls go through `ctx.call_tool`, model calls through `ctx.model_call` +
    `ctx.record_usage`, so the engine observes everything the agent does.
    """

    name: str

    # Read-only here: the engine only reads it, and an adapter may narrow it to `str`.
    @property
    def model(self) -> str | None: ...

    async def run(self, task: Task, ctx: AttemptContext) -> AgentOutcome: ...
