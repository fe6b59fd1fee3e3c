"""compare(): per-task exact tests + BH consistent with aeh.stats, the paired suite row, warnings, CLI."""

from __future__ import annotations

import math

import pytest

import aeh
from aeh.analysis import SUITE_ROW
from aeh.cli import main as cli_main
from aeh.stats import SUITE_ALPHA, TaskCounts, compare_tasks, paired_suite_difference
from aeh.store import Store


def test_strong_vs_degraded_matches_compare_tasks(mock_pair: tuple[str, str, str]) -> None:
    db, strong, degraded = mock_pair
    frame = aeh.compare(strong, degraded, db=db)
    tasks = frame.table[frame.table.task_id != SUITE_ROW].set_index("task_id")
    a = aeh.load_run(strong, db=db).table.set_index("task_id")
    b = aeh.load_run(degraded, db=db).table.set_index("task_id")
    expected = compare_tasks([TaskCounts(t, int(a.successes[t]), int(a.n[t]), int(b.successes[t]), int(b.n[t]))
                              for t in sorted(a.index)])
    assert list(tasks.index) == [c.task_id for c in expected]
    for c in expected:
        row = tasks.loc[c.task_id]
        assert (row.k_a, row.n_a, row.k_b, row.n_b) == (c.k_a, c.n_a, c.k_b, c.n_b)
        assert row.p_value == pytest.approx(c.p) and row.q_value == pytest.approx(c.q)
        assert row.regressed == c.regressed and row.improved == c.improved
        assert row.delta == pytest.approx(c.rate_b - c.rate_a)
        assert row.q_value >= row.p_value
    # toy_math, 20 attempts, seed 3: the degraded profile really regresses on every task
    assert tasks["regressed"].all()
    assert sorted(frame.regressed_tasks) == sorted(tasks.index)
    suite = frame.table[frame.table.task_id == SUITE_ROW].iloc[0]
    diff = paired_suite_difference([float(a.rate[t]) for t in sorted(a.index)],
                                   [float(b.rate[t]) for t in sorted(a.index)], alpha=SUITE_ALPHA)
    assert suite.delta == pytest.approx(diff.mean_delta) and suite.se == pytest.approx(diff.se)
    assert (suite.delta_low, suite.delta_high) == pytest.approx((diff.low, diff.high))
    assert suite.delta_low < suite.delta < suite.delta_high < 0
    assert suite.n_a == 3 and "paired over 3 tasks" in suite.note
    assert frame.warnings == []  # same suite hash, price table, no judge


def test_a_run_against_itself_flags_nothing(mock_pair: tuple[str, str, str]) -> None:
    db, strong, _ = mock_pair
    frame = aeh.compare(strong, strong, db=db)
    tasks = frame.table[frame.table.task_id != SUITE_ROW]
    assert not tasks.regressed.any() and (tasks.p_value == 1.0).all()
    assert frame.table[frame.table.task_id == SUITE_ROW].iloc[0].delta == 0.0


def test_hand_built_counts(store: Store, build) -> None:  # type: ignore[no-untyped-def]
    build.run(store, "A", {"drop": [True] * 10, "same": [True] * 5 + [False] * 5, "onlyA": [True]})
    build.run(store, "B", {"drop": [False] * 10, "same": [True] * 5 + [False] * 5, "onlyB": [False]})
    frame = aeh.compare("A", "B", db=store).table.set_index("task_id")
    assert frame.loc["drop", "regressed"] and frame.loc["drop", "delta"] == -1.0
    assert not frame.loc["same", "regressed"] and frame.loc["same", "p_value"] > 0.9
    assert "only in run A" in frame.loc["onlyA", "note"] and "only in run B" in frame.loc["onlyB", "note"]
    assert frame.loc[SUITE_ROW, "n_a"] == 2  # paired over the tasks in both runs
    assert frame.loc[SUITE_ROW, "delta"] == pytest.approx(-0.5)


@pytest.mark.parametrize(("field", "a", "b", "words"), [
    ("suite_hash", "h1", "h2", "suite definition changed"),
    ("judge_model", "gpt-4o", "gpt-4.1", "judge model changed"),
    ("tier2_prompt_version", "v1", "v2", "tier-2 prompt version changed"),
    ("price_table_version", "2025.1", "2026.11.1", "price table changed"),
])
def test_comparison_warnings(store: Store, build, field: str, a: str, b: str, words: str) -> None:  # type: ignore[no-untyped-def]
    outcomes = {"t": [True, False, True]}
    build.run(store, "A", outcomes, **{field: a})
    build.run(store, "B", outcomes, **{field: b})
    # another suite hash is refused unless the task overlap is asked for; then it is a warning
    warnings = aeh.compare("A", "B", db=store, overlap=True).warnings
    assert len(warnings) == 1 and words in warnings[0] and a in warnings[0] and b in warnings[0]


def test_no_warning_when_runs_match_and_no_verdict_when_not_valid(store: Store, build) -> None:  # type: ignore[no-untyped-def]
    build.run(store, "A", {"t": [True] * 10})
    build.run(store, "B", {"t": [True] * 9 + [None]})
    assert aeh.compare("A", "A", db=store).warnings == []
    frame = aeh.compare("A", "B", db=store)
    v = frame.verdict
    assert frame.warnings == []  # the harness errors are the refusal now, not a warning
    assert v.status == "cannot judge" and v.regressed is None
    assert [r.check for r in v.cannot_judge] == ["harness_errors"]
    assert "run B (B) has 10.0% harness errors (1 of 10 attempts, limit 2%)" in v.reasons[0]


def test_cli_exit_1_on_regression_and_0_without(mock_pair: tuple[str, str, str], capsys: pytest.CaptureFixture[str]) -> None:
    db, strong, degraded = mock_pair
    assert cli_main(["compare", strong, degraded, "--db", db]) == 1
    out = capsys.readouterr().out
    assert "VERDICT: REGRESSED at the task level (3 tasks) and the suite level" in out and "paired delta" in out
    assert "task level: 3 of 3 tasks regressed" in out
    assert cli_main(["compare", strong, strong, "--db", db]) == 0
    assert "no task regressed" in capsys.readouterr().out
    # the reverse direction is an improvement, not a regression
    assert cli_main(["compare", degraded, strong, "--db", db]) == 0


def test_cli_unknown_run_is_exit_2(mock_pair: tuple[str, str, str], capsys: pytest.CaptureFixture[str]) -> None:
    db, strong, _ = mock_pair
    assert cli_main(["compare", strong, "no-such-run", "--db", db]) == 2
    assert "no-such-run" in capsys.readouterr().err


def test_se_is_nan_on_task_rows(mock_pair: tuple[str, str, str]) -> None:
    db, strong, degraded = mock_pair
    frame = aeh.compare(strong, degraded, db=db)
    assert all(math.isnan(v) for v in frame.table[frame.table.task_id != SUITE_ROW].se)


def test_compare_warns_when_no_single_task_could_be_flagged(tmp_path) -> None:
    import aeh

    db = tmp_path / "runs.db"
    # 3 tasks × 2 attempts: the most extreme table (2/2 vs 0/2) has p = 0.25 > 0.05.
    a = aeh.run("toy_math", attempts=2, seed=1, db=db).run_id
    b = aeh.run("toy_math", attempts=2, seed=2, db=db).run_id
    warnings = aeh.compare(a, b, db=db).warnings
    assert any(w.startswith("underpowered:") and "3 tasks" in w for w in warnings)
    c = aeh.run("toy_math", attempts=12, seed=1, db=db).run_id
    d = aeh.run("toy_math", attempts=12, seed=2, db=db).run_id
    assert not any(w.startswith("underpowered") for w in aeh.compare(c, d, db=db).warnings)
