"""power() planning and agreement() κ on hand-written grader rows."""

from __future__ import annotations

import pytest

import aeh
from aeh.models import GraderResult
from aeh.stats import attempts_for_power, cohens_kappa, minimum_detectable_drop, power_of_comparison
from aeh.store import Store


@pytest.mark.slow
def test_power_attempts_needed() -> None:
    frame = aeh.power([0.9, 0.5], drop=0.3)
    assert list(frame.columns[:4]) == ["task_id", "base_rate", "n_tasks", "fdr"]
    assert frame.attempts_needed.tolist() == [attempts_for_power(0.9, 0.3, 0.8, 0.05, 2),
                                              attempts_for_power(0.5, 0.3, 0.8, 0.05, 2)]
    assert all(n >= 5 for n in frame.attempts_needed)
    assert "Boschloo" in frame.attrs["method"]


def test_power_with_planned_attempts() -> None:
    frame = aeh.power(0.8, drop=0.4, attempts=10, n_tasks=20)
    row = frame.iloc[0]
    assert row.n_tasks == 20
    assert row.minimum_detectable_drop == pytest.approx(minimum_detectable_drop(0.8, 10, 0.8, 0.05, 20))
    assert row.power == pytest.approx(power_of_comparison(0.8, 0.4, 10, 0.05, 20))
    assert 0.0 <= row.power <= 1.0
    # more attempts → more power
    assert aeh.power(0.8, drop=0.4, attempts=30, n_tasks=20).iloc[0].power > row.power


def test_power_from_pilot_run_and_errors(store: Store, build) -> None:  # type: ignore[no-untyped-def]
    build.run(store, "pilot", {"a": [True] * 9 + [False], "b": [True, False] * 5})
    frame = aeh.power(pilot_run="pilot", drop=0.3, db=store)
    assert frame.task_id.tolist() == ["a", "b"] and frame.base_rate.tolist() == [0.9, 0.5]
    with pytest.raises(ValueError, match="rates"):
        aeh.power(drop=0.3)
    with pytest.raises(ValueError, match="drop"):
        aeh.power(0.5)
    assert aeh.power(0.1, drop=0.3).iloc[0].attempts_needed is None


def test_power_from_pilot_skips_tasks_without_valid_attempts(store: Store, build) -> None:  # type: ignore[no-untyped-def]
    # task c: every attempt a harness error, so n = 0 and its rate is nan
    build.run(store, "pilot0", {"a": [True] * 9 + [False], "b": [True, False] * 5, "c": [None] * 4})
    with pytest.warns(UserWarning, match="skipped: c"):
        needed = aeh.power(pilot_run="pilot0", drop=0.3, db=store)
    assert needed.task_id.tolist() == ["a", "b"] and needed.attrs["skipped_tasks"] == ["c"]
    assert needed.n_tasks.tolist() == [2, 2] and needed.attempts_needed.notna().all()
    with pytest.warns(UserWarning, match="skipped: c"):
        planned = aeh.power(pilot_run="pilot0", attempts=10, drop=0.3, db=store)
    assert planned.task_id.tolist() == ["a", "b"] and planned.power.between(0, 1).all()


PROG = [True, True, True, False, False, True, False, True, True, False, True, False]
JUDGE = [True, True, False, False, True, True, False, True, True, False, True, True]


def test_agreement_kappa_equals_stats_cohens_kappa(store: Store, build) -> None:  # type: ignore[no-untyped-def]
    store.create_run(build.info("judged"))
    batch = []
    for i, (p, j) in enumerate(zip(PROG, JUDGE, strict=True)):
        graders = [GraderResult(tier=0, kind="exact", name="exact", passed=p),
                   GraderResult(tier=0, kind="judge", name="judge", passed=j)]
        batch.append((build.attempt("judged", f"t{i % 3}", i, p, graders=graders), []))
    # an attempt with only a programmatic verdict is outside the overlap set
    batch.append((build.attempt("judged", "t9", 0, True,
                                graders=[GraderResult(tier=0, kind="exact", name="exact", passed=True)]), []))
    # an undecided judge (passed None) is outside too
    batch.append((build.attempt("judged", "t9", 1, True,
                                graders=[GraderResult(tier=0, kind="exact", name="exact", passed=True),
                                         GraderResult(tier=0, kind="judge", name="judge", passed=None)]), []))
    store.write_attempts(batch)
    frame = aeh.agreement("judged", db=store)
    row = frame.table[frame.table.rater == "judge"].iloc[0]
    expected = cohens_kappa(PROG, JUDGE)
    assert row.n == 12 == expected.n
    assert row.kappa == pytest.approx(expected.kappa)
    assert (row.kappa_low, row.kappa_high) == pytest.approx((expected.kappa_low, expected.kappa_high))
    agree = sum(p == j for p, j in zip(PROG, JUDGE, strict=True))
    assert row.raw_agreement == pytest.approx(agree / 12)
    assert row.base_rate_programmatic == pytest.approx(sum(PROG) / 12)
    assert row.base_rate_rater == pytest.approx(sum(JUDGE) / 12)
    assert (row.both_pass, row.prog_pass_rater_fail, row.prog_fail_rater_pass, row.both_fail) == (6, 1, 2, 3)
    assert row.trusted == (expected.kappa >= 0.7)
    # by hand: po = 9/12, pe = (7/12)(8/12) + (5/12)(4/12) = 76/144 → κ = (108-76)/(144-76)
    assert row.kappa == pytest.approx(32 / 68)
    assert frame.threshold == 0.7
