"""The typed results: fields that match the stored run, a notebook rendering that shows the
verdict, and a terminal text that is the CLI's table (the DataFrame side: test_result_frames.py)."""

from __future__ import annotations

import dataclasses

import pytest

import aeh
from aeh.analysis import SUITE_ROW, CompareResult, RunResult, format_run_table
from aeh.store import Store


@pytest.fixture
def pair(store: Store, build) -> tuple[str, str]:
    a = build.run(store, "A", {"t1": [True] * 10, "t2": [True] * 10, "t3": [True] * 9 + [False]})
    b = build.run(store, "B", {"t1": [False] * 10, "t2": [True] * 10, "t3": [True] * 9 + [False]})
    return a, b


def test_run_fields_match_the_stored_attempts(store: Store, build) -> None:
    rid = build.run(store, "R", {"a": [True, True, False, None], "b": [True] * 4})
    result = aeh.load_run(rid, db=store)
    stored = store.attempts_frame(rid, ["success", "failure_bucket"])
    assert (result.attempts_total, result.harness_errors) == (
        stored.height, int((stored["failure_bucket"] == "harness_error").sum()))


def test_run_suite_rate_is_the_mean_of_the_table_rates(store: Store, build) -> None:
    result = aeh.load_run(build.run(store, "R", {"a": [True, False], "b": [True] * 4}), db=store)
    assert result.suite_rate == pytest.approx(result.table["rate"].mean())


def test_run_html_shows_the_verdict_then_the_table(store: Store, build) -> None:
    result = aeh.load_run(build.run(store, "R", {"a": [None] * 3 + [True]}), db=store)
    html = result._repr_html_()
    assert html.index("not a valid measurement") < html.index("<table")


def test_run_text_is_the_cli_table(store: Store, build) -> None:
    result = aeh.load_run(build.run(store, "R", {"a": [True, False]}), db=store)
    assert str(result) == format_run_table(result)


def test_a_result_is_frozen(store: Store, build) -> None:
    result = aeh.load_run(build.run(store, "R", {"a": [True]}), db=store)
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.suite_rate = 1.0  # type: ignore[misc]


def test_compare_regressed_tasks_are_the_regressed_rows(store: Store, pair: tuple[str, str]) -> None:
    result = aeh.compare(*pair, db=store)
    rows = result.table[(result.table.task_id != SUITE_ROW) & result.table.regressed]
    assert isinstance(result, CompareResult) and result.regressed_tasks == rows["task_id"].tolist() == ["t1"]


def test_compare_html_shows_the_verdict(store: Store, pair: tuple[str, str]) -> None:
    result = aeh.compare(*pair, db=store)
    assert f"data-verdict='{result.verdict.status}'" in result._repr_html_()


def test_compare_html_shows_cannot_judge(store: Store, build) -> None:
    a = build.run(store, "A", {"t": [True] * 5})
    b = build.run(store, "B", {"t": [None] * 5})
    assert "data-verdict='cannot judge'" in aeh.compare(a, b, db=store)._repr_html_()


def test_agreement_html_shows_the_verdict(store: Store, build) -> None:
    result = aeh.agreement(build.run(store, "R", {"a": [True]}), db=store)
    assert f"verdict: <b>{result.verdict}</b>" in result._repr_html_()


def test_gate_html_shows_the_verdict() -> None:
    from aeh.analysis._gate import gate_summaries

    dims = {"overall": {"mean": 1.0, "sd": 0.0, "n": 5}}
    base = {"run_id": "base", "dimensions": dims, "tasks": {}}
    result = gate_summaries(base, {}, dims, {}, "new")
    assert "data-verdict='no regression'" in result._repr_html_()


def test_the_table_is_reached_by_column_and_length(store: Store, build) -> None:
    result: RunResult = aeh.load_run(build.run(store, "R", {"a": [True], "b": [False]}), db=store)
    assert (len(result), list(result["task_id"])) == (2, ["a", "b"])
