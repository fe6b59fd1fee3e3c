"""The per-task table: columns, Wilson intervals, harness errors, cost honesty."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from statsmodels.stats.proportion import proportion_confint

import aeh
from aeh.analysis import HARNESS_ERROR_LIMIT, format_run_table
from aeh.store import Store

COLUMNS = ["task_id", "n", "successes", "rate", "low", "high", "clean_successes",
           "successes_breaking_invariants", "harness_errors", "attempts", "cost_usd",
           "cost_per_attempt_usd", "cost_per_success_usd", "priced", "latency_p50_s", "latency_p90_s"]


@pytest.mark.parametrize("suite", ["toy_math", "smoke"])
def test_mock_run_table_is_consistent_with_statsmodels_wilson(tmp_path: Path, suite: str) -> None:
    table = aeh.run(suite, adapter="mock", attempts=6, seed=11, db=tmp_path / "r.db")
    assert set(COLUMNS) <= set(table.table.columns)
    assert list(table.table.columns[:6]) == ["task_id", "n", "successes", "rate", "low", "high"]
    assert table["task_id"].is_unique and table["task_id"].tolist() == sorted(table["task_id"])
    for row in table.table.itertuples():
        assert row.attempts == 6 and row.n == 6 - row.harness_errors
        assert row.rate == row.successes / row.n
        low, high = proportion_confint(row.successes, row.n, alpha=0.05, method="wilson")
        assert row.low == pytest.approx(low, abs=1e-12) and row.high == pytest.approx(high, abs=1e-12)
        assert row.low <= row.rate <= row.high
        assert row.priced and row.cost_usd > 0
    rates = table["rate"].tolist()
    assert table.suite_rate == pytest.approx(sum(rates) / len(rates))
    assert table.n_tasks == len(table)
    assert "Miller" in table.suite_rate_method
    # the same table comes back from the store
    again = aeh.load_run(table.run_id[:12], db=tmp_path / "r.db")
    assert again[["task_id", "n", "successes"]].equals(table[["task_id", "n", "successes"]])


def test_harness_errors_leave_n_and_flag_the_run(store: Store, build) -> None:
    # 3 harness errors out of 100 attempts = 3% > 2%
    outcomes = {"a": [True] * 8 + [None, None], "b": [True, False] * 5, "c": [False] * 9 + [None]}
    outcomes.update({f"z{i}": [True] * 10 for i in range(7)})
    rid = build.run(store, "herr", outcomes)
    table = aeh.load_run(rid, db=store).table.set_index("task_id")
    assert (table.loc["a", "n"], table.loc["a", "successes"], table.loc["a", "harness_errors"]) == (8, 8, 2)
    assert table.loc["a", "attempts"] == 10 and table.loc["a", "rate"] == 1.0
    assert (table.loc["c", "n"], table.loc["c", "successes"], table.loc["c", "harness_errors"]) == (9, 0, 1)
    assert table.loc["b", "fail_wrong_answer"] == 5
    low, high = proportion_confint(8, 8, method="wilson")
    assert table.loc["a", "low"] == pytest.approx(low)
    attrs = aeh.load_run(rid, db=store)
    assert attrs.harness_errors == 3 and attrs.attempts_total == 100
    assert attrs.harness_error_rate == pytest.approx(0.03)
    assert HARNESS_ERROR_LIMIT == 0.02 and attrs.invalid_measurement is True
    assert "NOT A VALID MEASUREMENT" in format_run_table(aeh.load_run(rid, db=store))


def test_two_percent_harness_errors_is_still_valid(store: Store, build) -> None:
    outcomes = {f"t{i}": [True] * 10 for i in range(10)}
    outcomes["t0"] = [True] * 8 + [None, None]  # 2/100 = 2%: at the limit, not past it
    attrs = aeh.load_run(build.run(store, "two", outcomes), db=store)
    assert attrs.harness_error_rate == pytest.approx(0.02) and attrs.invalid_measurement is False


def test_cost_per_success_is_undefined_with_zero_successes(store: Store, build) -> None:
    rid = build.run(store, "zero", {"never": [False] * 5, "always": [True] * 5}, cost=0.002)
    table = aeh.load_run(rid, db=store).table.set_index("task_id")
    never = table.loc["never"]
    assert never["successes"] == 0
    assert never["cost_usd"] == pytest.approx(0.01)
    assert never["cost_per_attempt_usd"] == pytest.approx(0.002)
    cps = never["cost_per_success_usd"]
    assert cps is None or math.isnan(cps)  # undefined, never 0
    assert table.loc["always", "cost_per_success_usd"] == pytest.approx(0.002)
    attrs = aeh.load_run(rid, db=store)
    assert attrs.total_cost_usd == pytest.approx(0.02)
    assert attrs.cost_per_success_usd == pytest.approx(0.02 / 5)


def test_all_failures_run_has_no_cost_per_success(store: Store, build) -> None:
    attrs = aeh.load_run(build.run(store, "none", {"a": [False] * 3}), db=store)
    assert attrs.total_cost_usd == pytest.approx(0.003) and attrs.cost_per_success_usd is None


def test_unpriced_model_is_none_never_zero(store: Store, build) -> None:
    rid = build.run(store, "unpriced", {"a": [True, False], "b": [True, True]}, cost=None,
                    model="some-private-model")
    table = aeh.load_run(rid, db=store)
    for col in ("cost_usd", "cost_per_attempt_usd", "cost_per_success_usd"):
        assert all(v is None or math.isnan(v) for v in table[col]), col
    assert not table["priced"].any()
    assert table.priced is False
    assert table.total_cost_usd is None and table.cost_per_success_usd is None
    assert "unpriced" in format_run_table(table)


def test_one_unpriced_attempt_makes_the_task_unpriced(store: Store, build) -> None:
    store.create_run(build.info("mixed"))
    store.write_attempts([(build.attempt("mixed", "a", 0, True, cost=0.5), []),
                          (build.attempt("mixed", "a", 1, True, cost=None), [])])
    table = aeh.load_run("mixed", db=store)
    assert table.table.loc[0, "priced"] == False  # noqa: E712 (numpy bool)
    assert table.total_cost_usd is None


def test_attempts_and_spans_frames(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    rid = aeh.run("toy_math", adapter="mock", attempts=3, seed=5, db=db).run_id
    frame = aeh.attempts(rid, db=db)
    assert len(frame) == 9
    assert {"task_id", "attempt", "success", "failure_bucket", "cost_usd", "tokens_in", "latency_s",
            "status"} <= set(frame.columns)
    assert any(c.startswith("grader:") for c in frame.columns)
    assert "tool_calls" not in frame.columns
    table = aeh.load_run(rid, db=db).table.set_index("task_id")
    assert frame.groupby("task_id")["success"].sum().to_dict() == table["successes"].to_dict()
    spans = aeh.spans(rid, db=db)
    assert {"span_id", "parent_span_id", "category", "name", "start_ts", "attributes"} <= set(spans.columns)
    assert isinstance(spans["attributes"].iloc[0], str)
    assert isinstance(aeh.span_attributes(spans).iloc[0], dict)
    one = aeh.spans(rid, db=db, task_id=frame.task_id[0], attempt=0)
    assert set(one["task_id"]) == {frame.task_id[0]} and set(one["attempt"]) == {0}
    assert (one["parent_span_id"].isna()).sum() == 1  # one root per attempt
    runs = aeh.runs(db=db)
    assert runs.loc[0, "run_id"] == rid and runs.loc[0, "suite"] == "toy_math"
