"""A tiny in-memory suite and scripted adapters for engine tests."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from aeh.models import AgentOutcome, GoldenTrace, Task
from aeh.tools._tools import ToolRegistry


class NoteArgs(BaseModel):
    text: str


def make_registry() -> ToolRegistry:
    registry = ToolRegistry()

    @registry.tool("write_note", params=NoteArgs, description="append a note to notes.txt")
    def write_note(args: NoteArgs, env: Any) -> str:
        path = Path(env.workspace) / "notes.txt"
        existing = path.read_text() if path.exists() else ""
        path.write_text(existing + args.text + "\n")
        return f"{len(existing.splitlines()) + 1} note(s)"

    @registry.tool("read_notes", description="read notes.txt")
    def read_notes(args: dict, env: Any) -> str:
        path = Path(env.workspace) / "notes.txt"
        return path.read_text() if path.exists() else ""

    return registry


class MemorySuite:
    """An EvalSuite built in code: proves the engine needs nothing but the contract."""

    name = "memory"

    def __init__(self, tasks: list[Task], root: Path | None = None) -> None:
        self._tasks = tasks
        self.root = root

    def tasks(self) -> list[Task]:
        return list(self._tasks)

    def tool_registry(self) -> ToolRegistry:
        return make_registry()

    def invariants(self) -> dict[str, Any]:
        from aeh.grading.invariants import SHIPPED_INVARIANTS

        return dict(SHIPPED_INVARIANTS)

    def golden_traces(self) -> dict[str, GoldenTrace]:
        return {}


def task(task_id: str = "note", **overrides: Any) -> Task:
    data: dict[str, Any] = {
        "id": task_id,
        "prompt": "Write the note 'hello' and report how many notes exist.",
        "tools": ["write_note", "read_notes"],
        "plan": [{"tool": "write_note", "args": {"text": "hello"}}],
        "reference_answer": "1 note(s)",
        "graders": [{"kind": "contains", "substring": "1 note"}],
    }
    data.update(overrides)
    return Task.model_validate(data)


class ScriptedAdapter:
    """Calls the given tools in order, then answers; optional sleeps and crashes."""

    name = "scripted"
    model = "mock-strong"

    def __init__(self, calls: list[tuple[str, Any]] | None = None, answer: str = "1 note(s)",
                 sleep_s: float = 0.0, crash: bool = False, tokens: tuple[int, int] = (0, 0),
                 loop: bool = False) -> None:
        self.calls = calls if calls is not None else [("write_note", {"text": "hello"})]
        self.answer = answer
        self.sleep_s = sleep_s
        self.crash = crash
        self.tokens = tokens
        self.loop = loop

    async def run(self, task: Task, ctx: Any) -> AgentOutcome:
        if self.tokens != (0, 0):
            with ctx.model_call(self.model) as span:
                ctx.record_usage(span, self.model, *self.tokens)
        if self.crash:
            raise RuntimeError("adapter bug")
        if self.sleep_s:
            await asyncio.sleep(self.sleep_s)
        while True:
            for name, args in self.calls:
                await ctx.call_tool(name, args)
            if not self.loop:
                break
        return AgentOutcome(final_output=self.answer)
