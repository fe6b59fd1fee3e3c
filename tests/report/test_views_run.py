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
