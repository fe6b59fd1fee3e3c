"""A sync tool that blocks affects only its own attempt: timeouts fire, other budgets are untouched.

Timings carry wide slack (a loaded 2-core machine): the blocking tool sleeps 3 s, the budgets
that must hold are 1.5 s for work that takes well under 0.2 s.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import aeh
from aeh.models import AgentOutcome, GoldenTrace, Task
from aeh.store import Store
from aeh.tools._tools import ToolRegistry

BLOCK_S = 3.0


class BlockingSuite:
    """One task whose sync tool blocks for BLOCK_S, beside tasks whose sync tool is instant."""

    name = "blocking"

    def __init__(self, tasks: list[Task], tool_timeout_s: float) -> None:
        self._tasks = tasks
        self.tool_timeout_s = tool_timeout_s

    def tasks(self) -> list[Task]:
        return list(self._tasks)

    def tool_registry(self) -> ToolRegistry:
        registry = ToolRegistry()

        @registry.tool("slow", timeout_s=self.tool_timeout_s)
        def slow(args: dict, env: Any) -> str:
            time.sleep(BLOCK_S)  # a blocking client with no timeout of its own
            return "ok"

        @registry.tool("fast")
        def fast(args: dict, env: Any) -> str:
            return "ok"

        return registry

    def invariants(self) -> dict[str, Any]:
        return {}

    def golden_traces(self) -> dict[str, GoldenTrace]:
        return {}


class ToolThenAnswer:
    """Thinks briefly (so every attempt is in flight), calls the task's tool, answers its result."""

    name = "tool-then-answer"
    model = "mock-strong"

    async def run(self, task: Task, ctx: Any) -> AgentOutcome:
        await asyncio.sleep(0.05)
        call = await ctx.call_tool(task.tools[0], {})
        return AgentOutcome(final_output=call.result if call.ok else "no result")


def _task(task_id: str, tool: str, timeout_s: float) -> Task:
    return Task.model_validate({
        "id": task_id, "prompt": "call the tool", "tools": [tool],
        "graders": [{"kind": "contains", "substring": "ok"}],
        "budget": {"timeout_s": timeout_s},
    })


def test_a_blocking_sync_tool_affects_only_its_own_attempt(db: Path) -> None:
    tasks = [_task(f"fast_{i}", "fast", 1.5) for i in range(4)]
    tasks += [_task("slow", "slow", 30.0)]
    tasks += [_task(f"fast_{i}", "fast", 1.5) for i in range(4, 8)]
    started = time.monotonic()
    table = aeh.run(BlockingSuite(tasks, tool_timeout_s=0.5), adapter=ToolThenAnswer(),
                    attempts=1, concurrency=8, seed=1, db=db)
    elapsed = time.monotonic() - started
    with Store(db) as store:
        rows = store.attempts_frame(table.run_id).to_pandas().set_index("task_id")

    fast = rows.drop(index="slow")
    assert fast["success"].all(), fast[["status", "failure_bucket", "error"]].to_dict("index")
    slow = rows.loc["slow"]
    assert not slow["success"] and slow["failure_bucket"] == "tool_error"
    assert '"error_kind":"timeout"' in slow["tool_calls"].replace(" ", "")
    assert slow["latency_s"] < BLOCK_S - 0.5, "the tool's timeout_s fired while it blocked"
    assert elapsed < BLOCK_S + 5, "the run does not wait for the abandoned tool thread"


def test_attempt_timeout_fires_while_a_sync_tool_blocks(db: Path) -> None:
    suite = BlockingSuite([_task("slow", "slow", 0.5)], tool_timeout_s=30.0)
    table = aeh.run(suite, adapter=ToolThenAnswer(), attempts=2, concurrency=2, seed=1, db=db)
    with Store(db) as store:
        rows = store.attempts_frame(table.run_id).to_pandas()
    assert set(rows["failure_bucket"]) == {"budget_exhausted"}
    assert all("timeout_s=0.5" in e for e in rows["error"])
    assert all(lat < BLOCK_S - 0.5 for lat in rows["latency_s"])


def test_sync_and_async_tools_still_return_results_and_errors(db: Path) -> None:
    from aeh.engine.context import _invoke
    from aeh.tools._tools import ToolEnv

    async def async_tool(args: dict, env: Any) -> str:
        return "async"

    def failing(args: dict, env: Any) -> str:
        raise ValueError("bad")

    def wraps_async(args: dict, env: Any) -> Any:
        return async_tool(args, env)

    async def main() -> None:
        env = ToolEnv(workspace=Path("."))
        assert await _invoke(async_tool, {}, env) == "async"
        assert await _invoke(wraps_async, {}, env) == "async"
        try:
            await _invoke(failing, {}, env)
        except ValueError as exc:
            assert str(exc) == "bad"
        else:
            raise AssertionError("the sync tool's exception must reach the caller")

    asyncio.run(main())


class ThreadSuite(BlockingSuite):
    """Tools that report the thread they ran on, one declared non-blocking."""

    def tool_registry(self) -> ToolRegistry:
        import sys
        import threading

        registry = ToolRegistry()

        @registry.tool("pure", blocking=False)
        def pure(args: dict, env: Any) -> str:
            return f"ok {threading.current_thread().name}"

        @registry.tool("plain")
        def plain(args: dict, env: Any) -> str:
            return f"ok {threading.current_thread().name}"

        @registry.tool("exits", blocking=False)
        def exits(args: dict, env: Any) -> str:
            sys.exit(3)

        @registry.tool("bad_input", blocking=False)
        def bad_input(args: dict, env: Any) -> str:
            from aeh.tools import ToolInputError

            raise ToolInputError("1 +* 2 is not arithmetic")

        return registry


def test_a_non_blocking_sync_tool_runs_on_the_loop_and_fails_like_any_tool(db: Path) -> None:
    import threading

    tasks = [_task(name, name, 5.0) for name in ("pure", "plain", "exits", "bad_input")]
    table = aeh.run(ThreadSuite(tasks, tool_timeout_s=5.0), adapter=ToolThenAnswer(), attempts=1, seed=1, db=db)
    with Store(db) as store:
        rows = store.attempts_frame(table.run_id).to_pandas().set_index("task_id")
    assert rows.loc["pure", "final_output"] == f"ok {threading.main_thread().name}"
    assert rows.loc["plain", "final_output"] == "ok aeh-tool"
    assert '"error_kind":"exception"' in rows.loc["exits", "tool_calls"]
    assert "sys.exit(3)" in rows.loc["exits", "tool_calls"]
    assert '"error_kind":"invalid_args"' in rows.loc["bad_input", "tool_calls"]
