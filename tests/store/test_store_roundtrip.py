"""Writing runs, attempts, spans and grader results, and reading them back."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import aeh.store
from aeh.errors import RunNotFoundError, StoreError
from aeh.models import FailureBucket, RunConfig
from aeh.store import ATTEMPTS_SCHEMA, GRADER_SCHEMA, SPANS_SCHEMA, AmbiguousRunIdError, Store


@pytest.fixture(params=["file", "memory"])
def store(request: pytest.FixtureRequest, db_path: Path) -> Any:
    s = Store(db_path) if request.param == "file" else Store.memory()
    yield s
    s.close()


def test_exports() -> None:
    assert set(aeh.store.__all__) >= {"Store", "Redactor", "migration", "AmbiguousRunIdError"}
    for name in aeh.store.__all__:
        assert hasattr(aeh.store, name)


def test_round_trip(store: Store, make_run: Any, make_attempt: Any, make_spans: Any) -> None:
    info = make_run()
    store.create_run(info)
    a0 = make_attempt(attempt=0)
    a1 = make_attempt(attempt=1, success=False, failure_bucket=FailureBucket.wrong_answer,
                      cost_usd=None, final_output=None, error="bad")  # fmt: skip
    store.write_attempt(a0, make_spans(attempt=0))
    store.write_attempt(a1, make_spans(attempt=1))

    assert store.run_info("run-0001") == info
    assert store.attempt_record("run-0001", "t1", 0) == a0
    back = store.attempt_record("run-0001", "t1", 1)
    assert back == a1 and back.cost_usd is None and back.failure_bucket is FailureBucket.wrong_answer
    assert store.attempt_spans("run-0001", "t1", 1) == make_spans(attempt=1)

    frame = store.attempts_frame("run-0001")
    assert frame.schema == pl.Schema(ATTEMPTS_SCHEMA)
    assert frame["attempt"].to_list() == [0, 1]
    assert frame["cost_usd"].to_list() == [0.0012, None]  # unpriced stays null, never 0
    assert frame["success"].to_list() == [True, False]
    assert frame["clean_success"].to_list() == [True, False]
    assert frame["n_tool_calls"].to_list() == [2, 2]
    assert frame["n_injected_faults"].to_list() == [1, 1]
    assert frame["failure_bucket"].to_list() == [None, "wrong_answer"]

    grades = store.grader_frame("run-0001")
    assert grades.schema == pl.Schema(GRADER_SCHEMA)
    assert grades["passed"].to_list() == [True, None, True, None]
    assert grades["name"].to_list() == ["exact", "judge"] * 2

    spans = store.spans_frame("run-0001")
    assert spans.schema == pl.Schema(SPANS_SCHEMA) and spans.height == 6
    one = store.spans_frame("run-0001", task_id="t1", attempt=1)
    assert one["span_id"].to_list() == [s.span_id for s in make_spans(attempt=1)]
    assert one["end_ts"].to_list()[-1] is None


def test_a_whole_run_read_at_once_is_what_reading_each_attempt_gives(mock_db: tuple[Path, str, str]) -> None:
    db, _, run_id = mock_db
    with Store(db) as store:
        together = store.attempts_with_spans(run_id[:-2])  # a prefix, as the one-attempt readers take
        keys = store.attempts_frame(run_id, ["task_id", "attempt"]).rows()
        assert [(a.task_id, a.attempt) for a, _ in together] == keys  # task and attempt order
        one_by_one = [(store.attempt_record(run_id, t, n), store.attempt_spans(run_id, t, n)) for t, n in keys]
    assert together == one_by_one
    assert all(spans for _, spans in together) and any(a.grader_results for a, _ in together)


def test_cost_null_in_raw_row(file_store: Store, db_path: Path, make_run: Any, make_attempt: Any) -> None:
    file_store.create_run(make_run())
    file_store.write_attempt(make_attempt(cost_usd=None), [])
    raw = sqlite3.connect(db_path).execute("SELECT cost_usd, typeof(cost_usd) FROM attempts")
    assert raw.fetchall() == [(None, "null")]


def test_empty_frames_keep_schema(store: Store, make_run: Any) -> None:
    store.create_run(make_run())
    assert store.attempts_frame("run-0001").schema == pl.Schema(ATTEMPTS_SCHEMA)
    assert store.spans_frame("run-0001").schema == pl.Schema(SPANS_SCHEMA)
    assert store.grader_frame("run-0001").schema == pl.Schema(GRADER_SCHEMA)
    assert store.attempts_frame("run-0001").height == 0


def test_runs_newest_first_and_latest(store: Store, make_run: Any) -> None:
    assert store.runs() == [] and store.latest_run_id() is None
    store.create_run(make_run("a", created_at="2025-01-01T00:00:00Z"))
    store.create_run(make_run("c", created_at="2025-03-01T00:00:00Z"))
    store.create_run(make_run("b", created_at="2025-02-01T00:00:00Z", fault_profile=None))
    assert [r.run_id for r in store.runs()] == ["c", "b", "a"]
    assert store.latest_run_id() == "c"
    assert store.run_info("b").fault_profile is None


def test_update_run(store: Store, make_run: Any) -> None:
    store.create_run(make_run())
    store.update_run("run-0001", status="finished", finished_at="2025-01-01T01:00:00Z",
                     judge_model="judge-1", config={"x": 1})  # fmt: skip
    info = store.run_info("run-0001")
    assert (info.status, info.finished_at, info.judge_model, info.config) == (
        "finished", "2025-01-01T01:00:00Z", "judge-1", RunConfig(facts={"x": 1}))  # fmt: skip
    with pytest.raises(StoreError, match="cannot update"):
        store.update_run("run-0001", bogus=1)
    with pytest.raises(RunNotFoundError):
        store.update_run("nope", status="failed")


def test_run_not_found_message(store: Store) -> None:
    with pytest.raises(RunNotFoundError) as err:
        store.run_info("missing")
    assert "'missing'" in str(err.value) and store.path in str(err.value)
    assert "aeh runs --db" in str(err.value)
    with pytest.raises(RunNotFoundError):
        store.attempts_frame("missing")


def test_prefix_lookup(store: Store, make_run: Any) -> None:
    store.create_run(make_run("20250101-abc123"))
    store.create_run(make_run("20250101-abd999"))
    store.create_run(make_run("x_y"))
    assert store.run_info("20250101-abc").run_id == "20250101-abc123"
    assert store.resolve_run_id("20250101-abd") == "20250101-abd999"
    with pytest.raises(AmbiguousRunIdError, match="more characters") as err:
        store.run_info("20250101-ab")
    assert isinstance(err.value, RunNotFoundError)
    with pytest.raises(RunNotFoundError):
        store.run_info("20250101-ABC")  # case matters
    with pytest.raises(RunNotFoundError):
        store.run_info("x%")  # LIKE wildcards are literal
    with pytest.raises(RunNotFoundError):
        store.run_info("")
    assert store.resolve_run_id("x_") == "x_y"


def test_write_errors_are_store_errors(store: Store, make_run: Any, make_attempt: Any,
                                       make_spans: Any) -> None:  # fmt: skip
    with pytest.raises(StoreError, match="create_run"):
        store.write_attempt(make_attempt(), [])
    store.create_run(make_run())
    with pytest.raises(StoreError, match="already stored"):
        store.create_run(make_run())
    store.write_attempt(make_attempt(), make_spans())
    with pytest.raises(StoreError, match="already stored"):
        store.write_attempt(make_attempt(), [])
    with pytest.raises(StoreError, match="own spans"):
        store.write_attempt(make_attempt(attempt=5), make_spans(attempt=4))
    # a failed write leaves nothing half-written
    assert store.attempts_frame("run-0001").height == 1
    with pytest.raises(StoreError, match="no attempt"):
        store.attempt_record("run-0001", "t1", 9)


def test_write_attempts_bulk_is_one_transaction(store: Store, make_run: Any, make_attempt: Any,
                                                make_spans: Any) -> None:  # fmt: skip
    store.create_run(make_run())
    batch = [(make_attempt(attempt=k), make_spans(attempt=k)) for k in range(5)]
    store.write_attempts(batch)
    assert store.attempts_frame("run-0001").height == 5
    bad = [(make_attempt(attempt=k), make_spans(attempt=k)) for k in (5, 6, 0)]  # 0 is a dupe
    with pytest.raises(StoreError):
        store.write_attempts(bad)
    assert store.attempts_frame("run-0001").height == 5


def test_closed_store(db_path: Path) -> None:
    s = Store(db_path)
    s.close()
    s.close()
    with pytest.raises(StoreError, match="closed"):
        s.runs()


def test_open_errors_name_path_and_fix(tmp_path: Path) -> None:
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match="junk.db.*not an aeh store"):
        Store(junk)
    (tmp_path / "file").write_text("x")
    with pytest.raises(StoreError, match="folder"):
        Store(tmp_path / "file" / "runs.db")


def test_locked_db_is_store_error(db_path: Path, make_run: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("aeh.store._store._BUSY_TIMEOUT_S", 0.05)
    store = Store(db_path, lock_retries=1)  # one pause (0.5 s) before giving up, not four (7.5 s)
    other = sqlite3.connect(db_path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(StoreError, match="write lock"):
            store.create_run(make_run())
    finally:
        other.execute("ROLLBACK")
    store.create_run(make_run())  # usable once the lock is gone
    store.close()


def test_creates_parent_folder(tmp_path: Path) -> None:
    with Store(tmp_path / "a" / "b" / "runs.db") as s:
        assert s.runs() == []


def test_row_columns_are_the_frame_schemas_in_order() -> None:
    # The writers' column tuples and the readers' polars schemas are declared apart (writers never
    # load polars); a column added to one and not the other would misalign rows and frames.
    from aeh.store import _frames, _rows

    assert _rows.ATTEMPT_COLUMNS == tuple(_frames.ATTEMPTS_SCHEMA)
    assert _rows.SPAN_COLUMNS == tuple(_frames.SPANS_SCHEMA)
    assert _rows.GRADER_COLUMNS == tuple(_frames.GRADER_SCHEMA)
