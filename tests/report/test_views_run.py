"""The report's pass^k summary draws what `aeh.pass_k` defines: one task set at every k."""

from __future__ import annotations

import pandas as pd

from aeh.report import views


def _pass_k_frame() -> pd.DataFrame:
    # Task a: 5/5 valid attempts; task b: one valid attempt, failed. kmax defaults to the smallest
    # n (1), so the API's suite rows stop at k = 1 and average both tasks.
    rows = [{"task_id": "a", "k": k, "n": 5, "successes": 5, "pass_hat_k": 1.0, "pass_at_k": 1.0}
            for k in range(1, 6)]
    rows.append({"task_id": "b", "k": 1, "n": 1, "successes": 0, "pass_hat_k": 0.0, "pass_at_k": 0.0})
    rows.append({"task_id": "<suite>", "k": 1, "n": 2, "successes": None, "pass_hat_k": 0.5, "pass_at_k": 0.5})
    frame = pd.DataFrame(rows)
    frame.attrs["suite_tasks"] = ["a", "b"]
    return frame


def test_summary_uses_the_api_task_set_and_k_range() -> None:
    summary = views.pass_k_summary(_pass_k_frame())
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
    frame.attrs["suite_tasks"] = ["a", "b"]
    hat = views.pass_k_summary(frame).query("measure == 'pass^k'").sort_values("k")
    assert list(hat["k"]) == [1, 2, 3, 4, 5]
    assert all(x >= y for x, y in zip(hat["rate"], hat["rate"].iloc[1:], strict=False))


def test_run_header_shows_an_imported_runs_null_policy() -> None:
    table = pd.DataFrame()
    table.attrs.update({"run": {"run_id": "r1", "suite": "terminal-bench-core",
                                "config": {"import_policy": "null is_resolved counted as a failure"}},
                        "harness_errors": 0, "attempts_total": 4, "harness_error_rate": 0.0})
    html = views.run_header(table).data
    assert "import policy" in html
    assert "null is_resolved counted as a failure" in html


def test_run_header_shows_warnings_time_split_faults_and_judge_verdicts() -> None:
    table = pd.DataFrame()
    table.attrs.update({
        "run": {"run_id": "r2", "suite": "toy_math", "config": {}},
        "harness_errors": 0, "attempts_total": 6, "harness_error_rate": 0.0,
        "warnings": ["TOOLS PROBABLY NOT SEEN BY THE MODEL: 6 of 6 model turns …"],
        "time_split_s": {"agent": 5.0, "queue": 40.5, "grading": 147.6},
        "faults_planned_rate": 0.3, "faults_injected": 0, "tool_calls": 0,
        "judge_verdicts": {"attempted": 8, "valid": 0, "failed": 8,
                           "failed_by_reason": {"timeout": 4, "wrong_shape": 4}, "automatic": 2},
    })
    html = views.run_header(table).data
    assert "⚠ TOOLS PROBABLY NOT SEEN BY THE MODEL" in html and "run-warning" in html
    assert "5.00 s / 40.50 s / 147.60 s" in html
    assert "rate 0.3 / 0 injected over 0 tool calls" in html
    assert "8 attempted, 0 valid, 8 failed (timeout 4, wrong_shape 4), 2 automatic" in html


def test_task_table_has_a_failures_column_and_one_cost_per_attempt_name() -> None:
    table = pd.DataFrame([{"task_id": "a", "n": 2, "successes": 0, "rate": 0.0, "low": 0.0, "high": 0.66,
                           "clean_successes": 0, "harness_errors": 0, "cost_per_attempt_usd": 0.0,
                           "cost_per_success_usd": None, "latency_p50_s": 1.0, "failures": "wa:2"}])
    html = views.task_table(table).data
    assert "cost / attempt" in html and "wa:2" in html and "nan" not in html.lower()


def _run_table_with(status: str) -> pd.DataFrame:
    table = pd.DataFrame({"task_id": ["a"]})
    table.attrs.update({"attempts_total": 4, "run": {"run_id": "r-1", "status": status, "attempts": 5,
                                                     "config": {"tasks": ["a", "b"]}}})
    return table


def test_the_run_header_says_when_a_run_did_not_finish_and_how_to_resume_it() -> None:
    for status in ("interrupted", "stale", "failed"):
        html = views.run_header(_run_table_with(status)).data
        assert 'id="unfinished-run-banner"' in html and f"status {status}" in html
        assert "4 of 10 attempts are stored" in html and "aeh run --resume r-1" in html
    assert "unfinished-run-banner" not in views.run_header(_run_table_with("finished")).data
