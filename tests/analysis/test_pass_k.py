"""pass^k and pass@k on a hand-built run with known per-task counts."""

from __future__ import annotations

import warnings
from math import comb

import pytest

import aeh
from aeh.store import Store


def test_pass_k_on_hand_built_table(store: Store, build) -> None:
    # task a: 3 of 4, task b: 1 of 4, task c: 2 of 2 (fewer attempts), task d: 0 of 4
    rid = build.run(store, "pk", {"a": [True, True, True, False], "b": [False, True, False, False],
                                  "c": [True, True], "d": [False] * 4})
    frame = aeh.pass_k(rid, db=store)
    row = frame.table.set_index(["task_id", "k"])
    assert row.loc[("a", 1), "pass_hat_k"] == pytest.approx(0.75)
    assert row.loc[("a", 2), "pass_hat_k"] == pytest.approx(comb(3, 2) / comb(4, 2))  # 0.5
    assert row.loc[("a", 3), "pass_hat_k"] == pytest.approx(0.25)
    assert row.loc[("a", 4), "pass_hat_k"] == 0.0
    assert row.loc[("a", 2), "pass_at_k"] == pytest.approx(1 - comb(1, 2) / comb(4, 2))  # 1.0
    assert row.loc[("b", 2), "pass_at_k"] == pytest.approx(1 - comb(3, 2) / comb(4, 2))  # 0.5
    assert row.loc[("b", 2), "pass_hat_k"] == 0.0
    assert row.loc[("c", 2), "pass_hat_k"] == 1.0
    assert ("c", 3) not in row.index  # k never exceeds n
    assert row.loc[("d", 1), "pass_at_k"] == 0.0
    # suite rows: one task set for every k; by default every task (kmax = smallest n = 2)
    suite = frame[frame["task_id"] == "<suite>"]
    assert list(suite["k"]) == [1, 2] and (suite["n"] == 4).all()
    assert row.loc[("<suite>", 1), "pass_hat_k"] == pytest.approx((0.75 + 0.25 + 1.0 + 0.0) / 4)
    assert row.loc[("<suite>", 2), "pass_hat_k"] == pytest.approx((0.5 + 0 + 1 + 0) / 4)
    assert frame.suite_tasks == ["a", "b", "c", "d"]
    # a larger kmax drops task c (n = 2) from EVERY suite row, with a warning
    with pytest.warns(UserWarning, match="leave out 1 task.*: c"):
        wide = aeh.pass_k(rid, db=store, kmax=4).table.set_index(["task_id", "k"])
    assert wide.loc[("<suite>", 1), "pass_hat_k"] == pytest.approx((0.75 + 0.25 + 0.0) / 3)
    assert wide.loc[("<suite>", 3), "pass_hat_k"] == pytest.approx((0.25 + 0 + 0) / 3)
    assert wide.loc[("<suite>", 4), "pass_at_k"] == pytest.approx((1 + 1 + 0) / 3)
    assert all(wide.loc[("<suite>", k), "n"] == 3 for k in range(1, 5))
    assert frame.run_id == rid


def test_pass_k_pass_hat_falls_and_pass_at_rises(tmp_path) -> None:  # type: ignore[no-untyped-def]
    db = tmp_path / "r.db"
    rid = aeh.run("smoke", adapter="mock", attempts=5, seed=2, db=db, model="mock-degraded").run_id
    suite = aeh.pass_k(rid, db=db).table.query("task_id == '<suite>'").sort_values("k")
    assert list(suite["k"]) == [1, 2, 3, 4, 5]
    assert suite["pass_hat_k"].is_monotonic_decreasing and suite["pass_at_k"].is_monotonic_increasing
    k1 = suite.iloc[0]
    assert k1["pass_hat_k"] == pytest.approx(k1["pass_at_k"])
    assert k1["pass_hat_k"] == pytest.approx(aeh.load_run(rid, db=db).suite_rate)


def test_suite_pass_k_is_monotone_when_tasks_have_unequal_n(store: Store, build) -> None:
    # task a: 5 of 5, task b: 0 of 1. Averaging tasks with n >= k gave pass^1 = 0.5 and pass^5 = 1.0.
    rid = build.run(store, "uneven", {"a": [True] * 5, "b": [False]})
    for kmax in (None, 5):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            suite = aeh.pass_k(rid, db=store, kmax=kmax).table.query("task_id == '<suite>'").sort_values("k")
        assert suite["pass_hat_k"].is_monotonic_decreasing and suite["pass_at_k"].is_monotonic_increasing
        assert suite["n"].nunique() == 1


def _submissions() -> list[str]:
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "importers"))
    from realdata_paths import tb_submissions

    return tb_submissions()


@pytest.mark.parametrize("submission", _submissions() or [pytest.param("", marks=pytest.mark.skip(
    reason="../shared/realdata is absent"))])
def test_suite_pass_k_is_monotone_on_real_terminal_bench_runs(tmp_path, submission: str) -> None:  # type: ignore[no-untyped-def]
    """Unparsed trials as harness errors leave tasks with 3–5 valid attempts: one task set still holds."""
    from realdata_paths import TB_DIR

    from aeh.importers import import_terminal_bench

    rid = import_terminal_bench([TB_DIR / submission], db=tmp_path / "r.db", null_as="harness_error")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for kmax in (None, 5):
            suite = aeh.pass_k(rid, db=tmp_path / "r.db", kmax=kmax).table.query("task_id == '<suite>'")
            assert suite["pass_hat_k"].is_monotonic_decreasing and suite["pass_at_k"].is_monotonic_increasing
