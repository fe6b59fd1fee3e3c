"""A third-party adapter, registered through the `aeh.adapters` entry point."""

from __future__ import annotations

from typing import Any

from aeh.plugins import AgentOutcome, Task


class EchoAdapter:
    """Answers every task by repeating its prompt: never right, always well-formed."""

    name = "echo"

    def __init__(self, model: str | None = None, **options: Any) -> None:
        self.model = model or "echo-1"

    async def run(self, task: Task, ctx: Any) -> AgentOutcome:
        return AgentOutcome(final_output=task.prompt)
