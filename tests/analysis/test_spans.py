"""`aeh.spans`: Arrow-backed columns, attributes as JSON text, typed attribute keys on demand."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import polars as pl
import pytest

import aeh
from aeh.errors import ConfigError, StoreError
from aeh.models import Span
from aeh.store import Store
from tests.analysis.conftest import make_attempt, make_info

RUN = "spans-run"


def _span(task: str, k: int, i: int, start: float, attrs: dict[str, Any]) -> Span:
    return Span(run_id=RUN, task_id=task, attempt=k, span_id=f"{task}-{k}-{i}",
                parent_span_id=None if i == 0 else f"{task}-{k}-0", category="tools" if i else "scheduler",
                name=f"s{i}", start_ts=start, end_ts=None if i == 2 else start + 0.5, attributes=attrs)


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "runs.db"
    with Store(path) as store:
        store.create_run(make_info(RUN))
        for task in ("b_task", "a_task"):  # written out of task order
            for k in (1, 0):
                # written out of start order: the reader must put s2 (start 1.0) first
                spans = [_span(task, k, 0, 5.0, {"tokens": 10 * k, "model": "m1", "code": "007"}),
                         _span(task, k, 1, 7.0, {"tokens": 2.5, "flag": True, "nested": {"x": [1, 2]}}),
                         _span(task, k, 2, 1.0, {"code": 7})]
                store.write_attempt(make_attempt(RUN, task, k, True), spans)
    yield path


def test_rows_come_in_task_attempt_start_order_with_arrow_columns(db: Path) -> None:
    frame = aeh.spans(RUN, db=db)
    assert list(frame.columns) == ["run_id", "task_id", "attempt", "span_id", "parent_span_id", "category",
                                   "name", "start_ts", "end_ts", "status", "attributes"]
    assert all(isinstance(t, pd.ArrowDtype) for t in frame.dtypes)
    assert frame["task_id"].tolist() == ["a_task"] * 6 + ["b_task"] * 6
    assert frame["attempt"].tolist() == [0, 0, 0, 1, 1, 1] * 2
    assert frame["name"].tolist()[:3] == ["s2", "s0", "s1"]
    assert set(frame["run_id"]) == {RUN}
    assert frame["parent_span_id"].isna().sum() == 4 and frame["end_ts"].isna().sum() == 4
    assert isinstance(frame["attributes"].iloc[0], str)


def test_columns_reads_only_those(db: Path) -> None:
    frame = aeh.spans(RUN, db=db, columns=["name", "start_ts"])
    assert list(frame.columns) == ["name", "start_ts"]
    assert frame["start_ts"].tolist()[:3] == [1.0, 5.0, 7.0]  # still in start order
    with pytest.raises(StoreError, match="unknown span column"):
        aeh.spans(RUN, db=db, columns=["nope"])


def test_attribute_keys_become_typed_columns(db: Path) -> None:
    frame = aeh.spans(RUN, db=db, task_id="a_task", attempt=1, columns=["name"],
                      attributes=["tokens", "model", "flag", "nested", "code", "absent"])
    assert list(frame.columns) == ["name", "tokens", "model", "flag", "nested", "code", "absent"]
    rows = frame.set_index("name")
    assert str(rows["tokens"].dtype) == "double[pyarrow]" and rows.loc["s0", "tokens"] == 10.0
    assert rows.loc["s0", "model"] == "m1" and pd.isna(rows.loc["s1", "model"])
    assert str(rows["flag"].dtype) == "bool[pyarrow]" and bool(rows.loc["s1", "flag"])
    assert rows.loc["s1", "nested"] == '{"x":[1,2]}'
    # "007" and 7 under one key: text, never a silent 7 for "007"
    assert rows.loc["s0", "code"] == "007" and rows.loc["s2", "code"] == "7"
    assert rows["absent"].isna().all()


def test_span_attributes_reads_a_key_or_whole_dicts(db: Path) -> None:
    frame = aeh.spans(RUN, db=db)
    tokens = aeh.span_attributes(frame, "tokens")
    assert tokens.index.equals(frame.index) and tokens.name == "tokens"
    assert str(tokens.dtype) == "double[pyarrow]"  # ints and floats under one key
    assert tokens.isna().tolist()[:3] == [True, False, False] and tokens.tolist()[1:3] == [0.0, 2.5]
    ints_only = aeh.span_attributes(frame[frame["name"] == "s0"], "tokens")
    assert str(ints_only.dtype) == "int64[pyarrow]" and ints_only.tolist() == [0, 10, 0, 10]
    as_text = aeh.span_attributes(frame[frame["name"] == "s0"], "tokens", dtype=pl.String)
    assert as_text.tolist() == ["0", "10", "0", "10"]
    dicts = aeh.span_attributes(frame)
    assert dicts.iloc[0] == {"code": 7} and dicts.iloc[2]["nested"] == {"x": [1, 2]}
    with pytest.raises(ConfigError, match="'model' has values that are not"):
        aeh.span_attributes(frame, "model", dtype=pl.Int64)


def test_a_key_named_like_a_column_is_refused(db: Path) -> None:
    with pytest.raises(ConfigError, match=r"span column names.*span_attributes"):
        aeh.spans(RUN, db=db, attributes=["name"])


def test_memory_store_and_empty_run(tmp_path: Path) -> None:
    with Store.memory() as store:
        store.create_run(make_info(RUN))
        empty = aeh.spans(RUN, db=store)
        assert len(empty) == 0 and "attributes" in empty.columns
        store.write_attempt(make_attempt(RUN, "t", 0, True), [_span("t", 0, 0, 1.0, {"k": 1})])
        frame = aeh.spans(RUN, db=store, attributes=["k"])
        assert frame["k"].tolist() == [1] and frame["task_id"].tolist() == ["t"]


def test_store_frames_repeat_task_ids_in_row_order(db: Path) -> None:
    with Store(db) as store:
        attempts = store.attempts_frame(RUN, columns=["task_id", "attempt", "run_id"])
        graders = store.grader_frame(RUN)
        only_tasks = store.attempts_frame(RUN, columns=["task_id"])
    assert attempts.rows() == [("a_task", 0, RUN), ("a_task", 1, RUN), ("b_task", 0, RUN), ("b_task", 1, RUN)]
    assert only_tasks["task_id"].to_list() == ["a_task", "a_task", "b_task", "b_task"]
    assert graders.select("task_id", "attempt").rows() == sorted(graders.select("task_id", "attempt").rows())
    assert graders.schema["passed"] == pl.Boolean
