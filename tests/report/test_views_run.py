"""The report's pass^k summary draws what `aeh.pass_k` defines: one task set at every k."""

from __future__ import annotations

import types
from typing import Any

import pandas as pd
import pytest

from aeh.analysis import PassKResult, RunResult
from aeh.models import RunInfo
from aeh.report import views


def _info(**fields: Any) -> RunInfo:
    base = {"run_id": "r1", "created_at": "2026-01-01T00:00:00", "aeh_version": "0", "suite": "toy_math",
            "suite_hash": "h" * 16, "adapter": "mock", "seed": 1, "attempts": 5, "concurrency": 1,
            "price_table_version": "1", "price_table_date": "2026-01-01", "status": "finished"}
    return RunInfo(**{**base, **fields})


def _result(table: pd.DataFrame | None = None, run: RunInfo | None = None, **fields: Any) -> RunResult:
    base: dict[str, Any] = {"suite_rate": 0.5, "suite_low": 0.2, "suite_high": 0.8, "suite_se": 0.1,
                            "suite_rate_method": "mean", "n_tasks": 1, "attempts_total": 4, "harness_errors": 0,
                            "harness_error_rate": 0.0, "invalid_measurement": False}
    run = run or _info()
    return RunResult(table=pd.DataFrame() if table is None else table, run_id=run.run_id, run=run,
                     **{**base, **fields})


def _pass_k(frame: pd.DataFrame) -> PassKResult:
    return PassKResult(table=frame, run_id="r1", suite_tasks=["a", "b"], note="")


def _pass_k_frame() -> pd.DataFrame:
    # Task a: 5/5 valid attempts; task b: one valid attempt, failed. kmax defaults to the smallest
    # n (1), so the API's suite rows stop at k = 1 and average both tasks.
    rows = [{"task_id": "a", "k": k, "n": 5, "successes": 5, "pass_hat_k": 1.0, "pass_at_k": 1.0}
            for k in range(1, 6)]
    rows.append({"task_id": "b", "k": 1, "n": 1, "successes": 0, "pass_hat_k": 0.0, "pass_at_k": 0.0})
    rows.append({"task_id": "<suite>", "k": 1, "n": 2, "successes": None, "pass_hat_k": 0.5, "pass_at_k": 0.5})
    return pd.DataFrame(rows)


def test_summary_uses_the_api_task_set_and_k_range() -> None:
    summary = views.pass_k_summary(_pass_k(_pass_k_frame()))
    assert sorted(summary["k"].unique()) == [1]
    assert set(summary["n tasks"]) == {2}
    hat = summary[summary["measure"] == "pass^k"]
    assert hat["rate"].tolist() == [0.5]


def test_summary_pass_hat_k_never_rises() -> None:
    frame = _pass_k_frame()
    frame.loc[frame.task_id == "b", "n"] = 5
    extra = [{"task_id": "b", "k": k, "n": 5, "successes": 2, "pass_hat_k": 0.0, "pass_at_k": 1.0}
             for k in range(2, 6)]
    suite = [{"task_id": "<suite>", "k": k, "n": 2, "successes": None, "pass_hat_k": 0.5, "pass_at_k": 1.0}
             for k in range(2, 6)]
    frame = pd.concat([frame, pd.DataFrame(extra + suite)], ignore_index=True)
    hat = views.pass_k_summary(_pass_k(frame)).query("measure == 'pass^k'").sort_values("k")
    assert list(hat["k"]) == [1, 2, 3, 4, 5]
    assert all(x >= y for x, y in zip(hat["rate"], hat["rate"].iloc[1:], strict=False))


def test_run_header_shows_an_imported_runs_null_policy() -> None:
    table = _result(run=_info(suite="terminal-bench-core"), import_policy="null is_resolved counted as a failure")
    html = views.run_header(table).data
    assert "import policy" in html
    assert "null is_resolved counted as a failure" in html


def test_run_header_shows_warnings_time_split_faults_and_judge_verdicts() -> None:
    table = _result(
        run=_info(run_id="r2"), attempts_total=6,
        warnings=["TOOLS PROBABLY NOT SEEN BY THE MODEL: 6 of 6 model turns …"],
        time_split_s={"agent": 5.0, "queue": 40.5, "grading": 147.6},
        faults_planned_rate=0.3, faults_injected=0, tool_calls=0,
        judge_verdicts={"attempted": 8, "valid": 0, "failed": 8,
                        "failed_by_reason": {"timeout": 4, "wrong_shape": 4}, "automatic": 2},
    )
    html = views.run_header(table).data
    assert "⚠ TOOLS PROBABLY NOT SEEN BY THE MODEL" in html and "run-warning" in html
    assert "5.00 s / 40.50 s / 147.60 s" in html
    assert "rate 0.3 / 0 injected over 0 tool calls" in html
    assert "8 attempted, 0 valid, 8 failed (timeout 4, wrong_shape 4), 2 automatic" in html


def test_task_table_has_a_failures_column_and_one_cost_per_attempt_name() -> None:
    table = pd.DataFrame([{"task_id": "a", "n": 2, "successes": 0, "rate": 0.0, "low": 0.0, "high": 0.66,
                           "clean_successes": 0, "harness_errors": 0, "cost_per_attempt_usd": 0.0,
                           "cost_per_success_usd": None, "latency_p50_s": 1.0, "failures": "wa:2"}])
    html = views.task_table(_result(table)).data
    assert "cost / attempt" in html and "wa:2" in html and "nan" not in html.lower()


def _run_table_with(status: str) -> RunResult:
    return _result(pd.DataFrame({"task_id": ["a"]}), run=_info(run_id="r-1", status=status, attempts=5,
                                                                config={"tasks": ["a", "b"]}))


def test_the_run_header_says_when_a_run_did_not_finish_and_how_to_resume_it() -> None:
    for status in ("interrupted", "stale", "failed"):
        html = views.run_header(_run_table_with(status)).data
        assert 'id="unfinished-run-banner"' in html and f"status {status}" in html
        assert "4 of 10 attempts are stored" in html and "aeh run --resume r-1" in html
    assert "unfinished-run-banner" not in views.run_header(_run_table_with("finished")).data


@pytest.mark.parametrize("section", [views.run_header, views.suite_line, views.task_table, views.interval_chart,
                                     views.failure_table, views.failure_chart, views.cost_chart])
def test_a_run_section_refuses_a_bare_frame(section: Any) -> None:
    # a frame carries none of the fields: the section must fail, not render blank
    with pytest.raises(TypeError, match="RunResult"):
        section(pd.DataFrame({"task_id": ["a"]}))


@pytest.mark.parametrize("section", [views.compare_header, views.verdict_html, views.compare_table,
                                     views.forest_plot, views.newly_failing])
def test_a_compare_section_refuses_a_run_result(section: Any) -> None:
    with pytest.raises(TypeError, match="CompareResult"):
        section(_result())


@pytest.mark.parametrize(("section", "kind"), [(views.agreement_tables, "AgreementResult"),
                                               (views.pass_k_summary, "PassKResult"),
                                               (views.dimension_table, "ScoresResult"),
                                               (views.dimension_chart, "ScoresResult"),
                                               (views.matrix_html, "MatrixResult")])
def test_the_other_sections_refuse_a_bare_frame(section: Any, kind: str) -> None:
    with pytest.raises(TypeError, match=kind):
        section(pd.DataFrame())


def test_a_result_missing_a_field_fails_the_section() -> None:
    fields = {name: getattr(_result(), name) for name in RunResult.field_names() if name != "warnings"}
    with pytest.raises(TypeError):
        views.run_header(types.SimpleNamespace(**fields))
