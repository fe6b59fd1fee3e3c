"""Per-task aggregates, the bucket filter, and snapshot reads that a concurrent writer cannot split."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from aeh.store import Store

COUNTS = {"attempts": ("count(*)", pl.Int64()), "ok": ("sum(success)", pl.Int64()),
          "cost": ("total(cost_usd)", pl.Float64())}


def test_task_aggregates_one_row_per_task(mem_store: Store, make_run: Any, make_attempt: Any) -> None:
    mem_store.create_run(make_run())
    mem_store.write_attempts([
        (make_attempt(task_id=t, attempt=k, success=k != 1, cost_usd=0.5), []) for t in ("b", "a") for k in range(3)
    ])
    frame = mem_store.task_aggregates("run-0", COUNTS)  # a unique prefix of run-0001
    assert frame.schema == pl.Schema({"task_id": pl.String(), "attempts": pl.Int64(), "ok": pl.Int64(),
                                      "cost": pl.Float64()})
    assert frame.rows() == [("a", 3, 2, 1.5), ("b", 3, 2, 1.5)]


def test_attempts_frame_keeps_one_bucket(mem_store: Store, make_run: Any, make_attempt: Any) -> None:
    mem_store.create_run(make_run())
    mem_store.write_attempts([
        (make_attempt(task_id="t", attempt=0, success=False, status="harness_error",
                      failure_bucket="harness_error", error="boom"), []),
        (make_attempt(task_id="t", attempt=1, success=False, failure_bucket="wrong_answer"), []),
        (make_attempt(task_id="u", attempt=0, success=False, status="harness_error",
                      failure_bucket="harness_error", error="bang"), []),
    ])
    frame = mem_store.attempts_frame("run-0001", ["task_id", "attempt", "error"], failure_bucket="harness_error")
    assert frame.rows() == [("t", 0, "boom"), ("u", 0, "bang")]


def test_reads_in_a_snapshot_miss_a_concurrent_write(db_path: Path, make_run: Any, make_attempt: Any) -> None:
    with Store(db_path) as reader, Store(db_path) as writer:
        writer.create_run(make_run())
        writer.write_attempt(make_attempt(task_id="t", attempt=0))
        with reader.snapshot():
            before = reader.task_aggregates("run-0001", COUNTS)["attempts"].to_list()
            writer.write_attempt(make_attempt(task_id="t", attempt=1))  # another connection commits
            inside = reader.attempts_frame("run-0001", ["attempt"])["attempt"].to_list()
        after = reader.attempts_frame("run-0001", ["attempt"])["attempt"].to_list()
    assert (before, inside, after) == ([1], [0], [0, 1])


def test_grader_frame_picks_columns_and_tier(mem_store: Store, make_run: Any, make_attempt: Any) -> None:
    mem_store.create_run(make_run())
    mem_store.write_attempts([(make_attempt(task_id="t", attempt=k), []) for k in (1, 0)])
    tier0 = mem_store.grader_frame("run-0001", ["task_id", "attempt", "name", "passed"], tier=0)
    assert tier0.rows() == [("t", 0, "exact", True), ("t", 1, "exact", True)]
    assert mem_store.grader_frame("run-0001", ["passed", "error"], tier=2).rows() == [(None, "judge timed out")] * 2
