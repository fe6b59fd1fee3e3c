"""A long run streams: attempts in flight are bounded by the concurrency, not by the run's size,
and finished tasks are reported from compact summaries with the right verdicts."""

from __future__ import annotations

import asyncio
from pathlib import Path

import aeh
from aeh.engine.scheduler import RunProgress
from aeh.models import Attempt


class Watch(RunProgress):
    def __init__(self) -> None:
        self.most_tasks = 0
        self.finished: dict[str, list[Attempt]] = {}

    def attempt_finished(self, attempt: Attempt) -> None:
        self.most_tasks = max(self.most_tasks, len(asyncio.all_tasks()))

    def task_finished(self, task_id: str, attempts: list[Attempt]) -> None:
        self.finished[task_id] = attempts


def test_pending_attempts_are_not_parked_as_tasks(tmp_path: Path) -> None:
    watch = Watch()
    aeh.run("smoke", adapter="mock", attempts=40, concurrency=3, seed=1, db=tmp_path / "runs.db",
            progress=watch, adapter_options={"latency_s": 0})
    # 200 attempts: the run's own task, 3 workers each with its agent's task, and a few helpers
    # (heartbeat) — never one per attempt.
    assert watch.most_tasks <= 2 * 3 + 4


def test_finished_tasks_are_reported_with_their_verdicts(tmp_path: Path) -> None:
    watch = Watch()
    result = aeh.run("smoke", adapter="mock", attempts=6, seed=3, db=tmp_path / "runs.db", progress=watch,
                     adapter_options={"latency_s": 0})
    table = result.table.set_index("task_id")
    stored = aeh.attempts(result.run_id, tmp_path / "runs.db")
    assert sorted(watch.finished) == sorted(table.index)
    for task_id, attempts in watch.finished.items():
        assert [a.attempt for a in attempts] == list(range(6))
        assert sum(a.success for a in attempts) == table.loc[task_id, "successes"]
        mine = stored[stored.task_id == task_id].sort_values("attempt")
        assert [a.status for a in attempts] == list(mine.status)
        assert [a.cost_usd for a in attempts] == list(mine.cost_usd)
        assert all(a.run_id == result.run_id for a in attempts)


def test_a_loop_that_never_waits_does_not_outrun_the_store_writer(tmp_path: Path, monkeypatch) -> None:
    """The mock with latency_s=0 and a non-blocking tool never yields the GIL: without backpressure
    the writer thread fell thousands of attempts behind, each held in memory with its spans."""
    from aeh.store import _writer

    monkeypatch.setattr(_writer, "MAX_BACKLOG", 16)
    from aeh.engine import scheduler

    monkeypatch.setattr(scheduler, "MAX_BACKLOG", 16)
    most = [0]
    submit = _writer.AttemptWriter.submit

    def watching(self, attempt, spans=()):
        most[0] = max(most[0], self.backlog)
        submit(self, attempt, spans)

    monkeypatch.setattr(_writer.AttemptWriter, "submit", watching)
    table = aeh.run("smoke", adapter="mock", attempts=300, concurrency=4, seed=1, db=tmp_path / "runs.db",
                    tasks=["capital_first_alphabetically"], progress=False, adapter_options={"latency_s": 0})
    assert int(table["n"].sum()) == 300
    assert most[0] <= 16 + 4
