"""trajectory_diff / align_steps: constructed traces (identical, inserted, changed argument) and a stored pair."""

from __future__ import annotations

import pytest

import aeh
from aeh.analysis import CHANGED_STEP, ONLY_A_STEP, ONLY_B_STEP, SAME_STEP, Step, align_steps, diff_attempts
from aeh.errors import ConfigError
from aeh.models import Attempt, ToolCall

A = [Step("search", {"q": "capital of Kenya"}), Step("lookup", {"country": "Kenya"}), Step("answer", {"text": "Nairobi"})]


def _ops(rows) -> list[tuple[str, int | None, int | None]]:
    return [(r.op, r.index_a, r.index_b) for r in rows]


def test_identical_sequences_align_one_to_one():
    rows = align_steps(A, list(A))
    assert _ops(rows) == [(SAME_STEP, 0, 0), (SAME_STEP, 1, 1), (SAME_STEP, 2, 2)]


def test_one_inserted_step_is_only_in_b_and_the_rest_still_match():
    b = [A[0], Step("lookup", {"country": "Japan"}), A[1], A[2]]
    rows = align_steps(A, b)
    assert _ops(rows) == [(SAME_STEP, 0, 0), (ONLY_B_STEP, None, 1), (SAME_STEP, 1, 2), (SAME_STEP, 2, 3)]


def test_a_changed_argument_is_one_changed_step_naming_the_argument():
    b = [A[0], Step("lookup", {"country": "Kenia"}), A[2]]
    rows = align_steps(A, b)
    assert _ops(rows) == [(SAME_STEP, 0, 0), (CHANGED_STEP, 1, 1), (SAME_STEP, 2, 2)]
    assert rows[1].changed_args == ["country"]


def test_a_dropped_and_a_different_tool_are_one_sided():
    b = [A[0], Step("guess", {}), A[2]]
    rows = align_steps(A, b)
    assert _ops(rows) == [(SAME_STEP, 0, 0), (ONLY_A_STEP, 1, None), (ONLY_B_STEP, None, 1), (SAME_STEP, 2, 2)]


def test_argument_order_does_not_matter_but_values_do():
    assert Step("f", {"a": 1, "b": 2}).key == Step("f", {"b": 2, "a": 1}).key
    assert Step("f", {"a": 1}).key != Step("f", {"a": "1"}).key


def _attempt(run: str, n: int, calls: list[tuple[str, dict]], ok: bool) -> Attempt:
    return Attempt(run_id=run, task_id="t", attempt=n, seed=n, success=ok, status="answered", final_output="x" if ok else "y",
                   tool_calls=[ToolCall(name=name, args=args, result="r") for name, args in calls])


def test_divergence_point_is_the_first_row_that_differs():
    a = _attempt("A", 0, [("s", {}), ("l", {"c": "Kenya"}), ("f", {})], True)
    b = _attempt("B", 1, [("s", {}), ("l", {"c": "Kenia"}), ("f", {})], False)
    diff = diff_attempts(a, b)
    assert diff.first_divergence == 1 and not diff.identical
    assert "step 1 of A" in diff.divergence_text() and "step 1 of B" in diff.divergence_text()
    assert list(diff.table["op"]) == [SAME_STEP, CHANGED_STEP, SAME_STEP]
    assert diff.table.loc[1, "changed_args"] == "c"
    assert "▶ ~" in str(diff)
    html = diff._repr_html_()
    assert "diverges here" in html and "data-op='changed'" in html
    same = diff_attempts(a, a)
    assert same.identical and same.first_divergence is None and same.similarity == 1.0


def test_stored_runs_default_to_a_pass_against_a_failure(mock_db):
    db, run_a, run_b = mock_db
    frame_b = aeh.attempts(run_b, db=db)
    task = str(frame_b[~frame_b["success"]]["task_id"].iloc[0])
    diff = aeh.trajectory_diff(run_a, run_b, task, db=db)
    assert isinstance(diff, aeh.TrajectoryDiff)
    assert diff.task_id == task and diff.run_a == run_a and diff.run_b == run_b
    assert diff.success_a is True and diff.success_b is False
    assert len(diff.table) == len(diff.steps) >= 1
    chosen = aeh.trajectory_diff(run_a, run_b, task, db=db, attempt_a=1, attempt_b=1)
    assert (chosen.attempt_a, chosen.attempt_b) == (1, 1)


def test_a_task_one_run_lacks_is_a_clear_error(mock_db):
    db, run_a, run_b = mock_db
    with pytest.raises(ConfigError, match="no attempt of task 'nope'"):
        aeh.trajectory_diff(run_a, run_b, "nope", db=db)
