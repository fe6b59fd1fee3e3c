"""A finished run's per-task totals, stored (migration 8): read back equal to a fresh aggregate, and
never served once the run has gained attempts."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from pandas.testing import assert_frame_equal

from aeh import analysis
from aeh.analysis._task_totals import _COUNTS, _TOTALS, RUN_WIDE
from aeh.store import TASK_TOTALS, Store, _totals, applied_versions

RUN = "run-0001"


def _attempts(make_attempt: Any, run_id: str = RUN, attempts: int = 4, worse: str = "") -> list[Any]:
    """Successes, clean or not, agent failures, harness errors, an unpriced attempt, review flags."""
    out = []
    for t in ("b", "a", "c"):
        for k in range(attempts):
            kw: dict[str, Any] = {"success": (k % 2 == 0) != (t == worse), "clean_success": k != 2, "latency_s": 1.0 + k / 3,
                                  "cost_usd": None if (t, k) == ("c", 1) else 0.001 * (k + 1),
                                  "needs_human_review": k == 3, "queue_s": 0.25 * k, "grading_s": 0.1}
            if k == 1:
                kw |= {"status": "harness_error", "failure_bucket": "harness_error", "error": f"boom {t}"}
            elif k == 3:
                kw["failure_bucket"] = "wrong_answer"
            out.append((make_attempt(run_id=run_id, task_id=t, attempt=k, **kw), []))
    return out


@pytest.fixture
def finished(db_path: Path, make_run: Any, make_attempt: Any) -> Path:
    with Store(db_path) as store:
        store.create_run(make_run())
        store.create_run(make_run(run_id="run-0002", created_at="2025-01-02T00:00:00Z"))
        store.write_attempts(_attempts(make_attempt))
        store.write_attempts(_attempts(make_attempt, "run-0002", attempts=3, worse="c"))
        store.update_run(RUN, status="finished")
        store.update_run("run-0002", status="finished")
    return db_path


def _stored(db: Path, run_id: str = RUN) -> Any:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT rows FROM task_totals_cache WHERE run_id = ?", (run_id,)).fetchone()


def _tamper(db: Path, run_id: str = RUN) -> None:
    """Make the stored totals say 999 attempts per task, so a read that uses them shows it."""
    rows = json.loads(_stored(db, run_id)[0])
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE task_totals_cache SET rows = ? WHERE run_id = ?",
                     (json.dumps([[r[0], 999, *r[2:]] for r in rows]), run_id))


def test_finishing_a_run_stores_its_totals_and_reads_serve_them(finished: Path) -> None:
    _tamper(finished)
    with Store(finished, read_only=True) as store:
        assert store.task_aggregates(RUN, _COUNTS)["attempts"].to_list() == [999] * 3  # served from the store
        fresh = store.task_aggregates(RUN, _COUNTS, tasks=["a", "b", "c"])  # a task subset is always aggregated
    assert fresh["attempts"].to_list() == [4] * 3


@pytest.mark.parametrize("aggregates", [_TOTALS, RUN_WIDE, _COUNTS], ids=["totals", "run-wide", "counts"])
def test_stored_totals_equal_a_fresh_aggregate(finished: Path, aggregates: dict[str, Any]) -> None:
    with Store(finished, read_only=True) as store:
        with sqlite3.connect(finished) as conn:
            assert _totals.recall(conn, RUN, ((k, sql) for k, (sql, _) in aggregates.items())) is not None
        stored = store.task_aggregates(RUN, aggregates)
        fresh = store.task_aggregates(RUN, aggregates, tasks=["a", "b", "c"])
    assert stored.equals(fresh) and stored.schema == fresh.schema
    assert stored.height == 3 and stored["task_id"].to_list() == ["a", "b", "c"]


def test_the_analysis_reads_the_same_figures_with_and_without_stored_totals(finished: Path) -> None:
    def figures() -> tuple[Any, ...]:
        table = analysis.run_table(RUN, finished)
        page = analysis.scorecard_page(RUN, finished, limit=2)
        compared = analysis.compare("run-0002", RUN, finished)
        return table, page, compared

    with_stored = figures()
    with sqlite3.connect(finished) as conn:
        conn.execute("DELETE FROM task_totals_cache")
    fresh = figures()
    for stored, again in zip(with_stored, fresh, strict=True):
        assert_frame_equal(stored.table if hasattr(stored, "table") else stored.result.table,
                           again.table if hasattr(again, "table") else again.result.table)
    table, page, compared = with_stored
    assert (table.suite_rate, table.harness_errors, table.total_cost_usd) == (
        fresh[0].suite_rate, fresh[0].harness_errors, fresh[0].total_cost_usd)
    assert page.buckets == fresh[1].buckets and page.result.suite_rate == fresh[1].result.suite_rate
    assert compared.verdict == fresh[2].verdict
    assert table.total_cost_usd is None and table.harness_errors == 3  # an unpriced attempt; one error a task


def test_a_run_that_gains_attempts_is_aggregated_afresh(finished: Path, make_attempt: Any) -> None:
    _tamper(finished)
    with Store(finished) as store:  # as a resume or a merge into the run adds attempts
        store.write_attempt(make_attempt(task_id="a", attempt=9, success=True))
        assert store.task_aggregates(RUN, _COUNTS)["attempts"].to_list() == [5, 4, 4]
        assert store.task_aggregates("run-0002", _COUNTS)["attempts"].to_list() == [3] * 3
        with sqlite3.connect(finished) as conn:
            assert _totals.recall(conn, RUN, [("attempts", TASK_TOTALS["attempts"])]) is None
        store.update_run(RUN, status="finished")  # finished again: the new totals are stored
        with sqlite3.connect(finished) as conn:
            assert _totals.recall(conn, RUN, [("attempts", TASK_TOTALS["attempts"])]) == [("a", 5), ("b", 4), ("c", 4)]


def test_a_new_attempt_in_a_task_that_sorts_first_is_seen_too(finished: Path, make_attempt: Any) -> None:
    _tamper(finished)
    with Store(finished) as store:  # a new task: the count changes and the largest rowid grows
        store.write_attempt(make_attempt(task_id="0", attempt=0))
        assert store.task_aggregates(RUN, _COUNTS)["task_id"].to_list() == ["0", "a", "b", "c"]


def test_other_aggregates_and_unfinished_runs_are_aggregated(db_path: Path, make_run: Any,
                                                             make_attempt: Any) -> None:
    with Store(db_path) as store:
        store.create_run(make_run())
        store.write_attempts(_attempts(make_attempt))
        assert _stored(db_path) is None  # running: nothing stored
        other = {"attempts": ("count(*)", pl.Int64()), "ok": ("sum(success)", pl.Int64())}
        store.update_run(RUN, status="finished")
        _tamper(db_path)
        assert store.task_aggregates(RUN, other)["attempts"].to_list() == [4] * 3
        assert store.task_aggregates(RUN, {"attempts": ("count(*)", pl.UInt32())})["attempts"].to_list() == [999] * 3


def test_migration_8_stores_the_totals_of_runs_already_finished(finished: Path) -> None:
    before = _stored(finished)
    with sqlite3.connect(finished) as conn:  # back to schema 7, as an older aeh left it
        conn.execute("DROP TABLE task_totals_cache")
        conn.execute("DELETE FROM schema_migrations WHERE version = 8")
    Store(finished).close()
    with sqlite3.connect(finished) as conn:
        assert 8 in applied_versions(conn)
    assert _stored(finished) == before and _stored(finished, "run-0002") is not None


def test_a_merge_that_finishes_a_run_stores_its_totals(tmp_path: Path, make_run: Any, make_attempt: Any) -> None:
    from aeh.store import merge_stores

    shards = []
    for k in range(2):
        path = tmp_path / f"shard{k}.db"
        with Store(path) as store:
            store.create_run(make_run(attempts=4, config={"tasks": ["a", "b", "c"],
                                                          "provenance": {"shard": f"{k + 1}/2"}}))
            store.write_attempts([p for i, p in enumerate(_attempts(make_attempt)) if i % 2 == k])
            store.update_run(RUN, status="finished")
        shards.append(path)
    target = tmp_path / "merged.db"
    result = merge_stores(shards, target)
    assert result.status == "finished", result
    with Store(target, read_only=True) as store:
        stored = store.task_aggregates(RUN, _TOTALS)
        assert stored.equals(store.task_aggregates(RUN, _TOTALS, tasks=["a", "b", "c"]))
    assert _stored(target) is not None and stored["attempts"].to_list() == [4] * 3
