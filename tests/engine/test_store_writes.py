"""Store writes happen off the event loop, and an interrupted run still stores what finished."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from aeh.engine.runspec import RunSpec
from aeh.engine.scheduler import RunProgress, execute_run
from aeh.models import AgentOutcome, Attempt, Task
from aeh.pricing import load_price_table
from aeh.store import Store
from tests.engine.helpers import MemorySuite, ScriptedAdapter, task


class SlowStore(Store):
    """A store whose attempt writes take `delay_s` (a slow disk, a busy WAL checkpoint);
    with `once`, only the first write is slow."""

    def __init__(self, *args: Any, delay_s: float, once: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.delay_s = delay_s
        self.once = once

    def write_attempts(self, batch: Any) -> None:
        time.sleep(self.delay_s)
        if self.once:
            self.delay_s = 0.0
        super().write_attempts(batch)


def _execute(suite: Any, adapter: Any, store: Store, progress: RunProgress | None = None,
             **options: Any) -> Any:
    return execute_run(suite, adapter, store, load_price_table(None),
                       RunSpec.build(seed=1, **options), progress=progress)


class Staggered(ScriptedAdapter):
    """Task t<i> thinks 30·i ms, so attempts finish one after another, not all at once."""

    async def run(self, t: Task, ctx: Any) -> AgentOutcome:
        await asyncio.sleep(0.03 * int(t.id[1:]))
        return await super().run(t, ctx)


def test_a_slow_store_write_charges_no_attempt_budget(db: Path) -> None:
    # The first attempt's write takes 1.5 s; on the loop it would push every attempt still in
    # flight past its 1 s budget. The attempts themselves need about 0.25 s at most.
    suite = MemorySuite([task(f"t{i}", budget={"timeout_s": 1.0}) for i in range(8)])
    with SlowStore(db, delay_s=1.5, once=True) as store:
        info = asyncio.run(_execute(suite, Staggered(), store, attempts=1, concurrency=8))
        rows = store.attempts_frame(info.run_id)
    assert len(rows) == 8
    assert rows["success"].all(), rows.select("task_id", "status", "error").rows()


class CancelAfter(RunProgress):
    """Cancels the run once `n` attempts have finished (as Ctrl-C would)."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.finished: list[Attempt] = []
        self.task: asyncio.Task[Any] | None = None

    def attempt_finished(self, attempt: Attempt) -> None:
        self.finished.append(attempt)
        if len(self.finished) == self.n and self.task is not None:
            self.task.cancel()


class HangsOnOneTask(ScriptedAdapter):
    async def run(self, t: Task, ctx: Any) -> AgentOutcome:
        if t.id == "hang":
            await asyncio.sleep(60)
        return await super().run(t, ctx)


def test_an_interrupted_run_stores_every_attempt_that_finished(db: Path) -> None:
    suite = MemorySuite([task("hang")] + [task(f"t{i}") for i in range(6)])
    progress = CancelAfter(6)

    async def main(store: Store) -> None:
        progress.task = asyncio.ensure_future(_execute(suite, HangsOnOneTask(), store, progress,
                                                       attempts=1, concurrency=8))
        try:
            await progress.task
        except asyncio.CancelledError:
            pass

    with SlowStore(db, delay_s=0.2) as store:  # writes lag behind: some are queued at cancel
        asyncio.run(main(store))
        run = store.runs()[0]
        stored = set(store.attempts_frame(run.run_id)["task_id"].to_list())
    assert run.status == "interrupted"
    assert stored == {a.task_id for a in progress.finished} == {f"t{i}" for i in range(6)}
