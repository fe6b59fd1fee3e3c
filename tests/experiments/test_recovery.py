"""Recovery curves: success falls as the injected fault rate rises; the title names the mode."""

from __future__ import annotations

import pytest

import aeh
from aeh.experiments import COLUMNS, format_recovery_table, recovery_curve
from aeh.report.views import plot_recovery_curve

# Tasks that only use local tools, so no fixture server is needed and no timeout sleeps happen.
TASKS = ["fm_open_urgent_list", "fm_status_counts_json", "fm_refund_totals", "sa_first_response_by_plan",
         "mt_overdue_reminders", "fm_escalate_open_outages"]


@pytest.fixture(scope="module")
def curves(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    db = tmp_path_factory.mktemp("rc") / "runs.db"
    out: dict[str, object] = {"db": db}
    for mode in ("burst", "uniform"):
        out[mode] = recovery_curve("core", "mock", rates=(0, 0.5), mode=mode, attempts=6,
                                   kinds=("500", "garbage"), seed=3, db=db, concurrency=8, tasks=TASKS)
    return out


@pytest.mark.slow  # the `curves` fixture runs four recovery-curve cells
def test_success_falls_as_the_fail_rate_rises(curves: dict) -> None:
    for mode in ("burst", "uniform"):
        frame = curves[mode]
        assert list(frame.columns) == COLUMNS
        assert set(frame["error_kind"]) == {"500", "garbage", "all"}
        assert (frame["mode"] == mode).all()
        clean = frame[(frame["rate"] == 0) & (frame["error_kind"] == "all")].iloc[0]
        faulty = frame[(frame["rate"] == 0.5) & (frame["error_kind"] == "all")].iloc[0]
        assert clean.n == faulty.n == len(TASKS) * 6
        assert faulty.success_rate < clean.success_rate - 0.2
        assert clean.injected_faults == 0 and faulty.injected_faults > 0
        assert 0.3 < faulty.observed_fault_rate < 0.7
        for _, row in frame.iterrows():
            assert row.low <= row.success_rate <= row.high


@pytest.mark.slow  # the `curves` fixture runs four recovery-curve cells
def test_title_names_the_mode(curves: dict) -> None:
    assert "burst faults (windows of 5 calls)" in curves["burst"].attrs["title"]
    assert "uniform faults" in curves["uniform"].attrs["title"]
    table = format_recovery_table(curves["burst"], curves["uniform"])
    assert "burst: success" in table and "uniform: success" in table


@pytest.mark.slow  # the `curves` fixture runs four recovery-curve cells
def test_rate_zero_is_one_run_shown_under_every_kind(curves: dict) -> None:
    zero = curves["burst"][curves["burst"]["rate"] == 0]
    assert zero["run_id"].nunique() == 1 and len(zero) == 3


@pytest.mark.slow  # the `curves` fixture runs four recovery-curve cells
def test_runs_are_stored_with_their_fault_profile(curves: dict) -> None:
    frame = curves["uniform"]
    run_id = frame[(frame["rate"] == 0.5) & (frame["error_kind"] == "500")]["run_id"].iloc[0]
    info = aeh.load_run(run_id, curves["db"]).run
    assert info.fault_profile["mode"] == "uniform"
    assert info.fault_profile["rates"] == {"500": 0.5}


@pytest.mark.slow  # the `curves` fixture runs four recovery-curve cells
def test_plot_says_which_mode(curves: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import pandas as pd

    axes = plot_recovery_curve(pd.concat([curves["burst"], curves["uniform"]]))
    titles = [a.get_title() for a in axes]
    assert titles[0].startswith("burst") and titles[1].startswith("uniform")
    ax = plot_recovery_curve(curves["burst"])
    assert "burst" in ax.figure._suptitle.get_text()


def test_lazy_public_entry_point_and_bad_arguments() -> None:
    assert aeh.recovery_curve is recovery_curve
    with pytest.raises(ValueError):
        recovery_curve("core", mode="sometimes")
    with pytest.raises(ValueError):
        recovery_curve("core", kinds=("404",))


def test_interval_treats_tasks_as_the_unit() -> None:
    """Repeats of a task are not independent: the curve's interval is the suite rate's, not pooled Wilson."""
    import pandas as pd

    from aeh.experiments._recovery import _row
    from aeh.stats import suite_rate, wilson_interval

    table = pd.DataFrame({"task_id": list("abcd"), "n": [10] * 4, "successes": [10, 10, 0, 0],
                          "rate": [1.0, 1.0, 0.0, 0.0], "harness_errors": [0] * 4, "injected_faults": [3] * 4})
    row = _row(table, "r", 40, mode="burst", rate=0.3, kind="all")
    expected = suite_rate([1.0, 1.0, 0.0, 0.0])
    assert (row["success_rate"], row["low"], row["high"]) == pytest.approx((0.5, expected.low, expected.high))
    pooled = wilson_interval(20, 40)
    assert row["high"] - row["low"] > 2 * (pooled[1] - pooled[0])
    same = table.assign(successes=[0] * 4, rate=[0.0] * 4)  # zero spread: Wilson over tasks, as the suite
    zero = _row(same, "r", 40, mode="burst", rate=0.3, kind="all")
    assert zero["low"] == 0.0 and zero["high"] == pytest.approx(suite_rate([0.0] * 4).high) and zero["high"] > 0.3
