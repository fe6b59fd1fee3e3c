"""Charts a reader can trust: pass^k bands that respect monotone truths, whiskers inside [0, 1],
bars that are bars, and legends beside the data rather than on it."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

import aeh  # noqa: E402
from aeh.analysis import PassKResult, ScoresResult  # noqa: E402
from aeh.report import views  # noqa: E402
from aeh.stats import pass_at_k, pass_hat_k, suite_rate  # noqa: E402

# five tasks of ten attempts, as a degraded agent leaves them: 7, 7, 9, 6, 6 successes
COUNTS = {"a": (10, 7), "b": (10, 7), "c": (10, 9), "d": (10, 6), "e": (10, 6)}


def _pass_k(counts: dict[str, tuple[int, int]]) -> PassKResult:
    rows = [{"task_id": t, "k": k, "n": n, "successes": c, "pass_hat_k": pass_hat_k(n, c, k),
             "pass_at_k": pass_at_k(n, c, k)} for t, (n, c) in counts.items() for k in range(1, n + 1)]
    kmax = min(n for n, _ in counts.values())
    rows += [{"task_id": "<suite>", "k": k, "n": len(counts), "successes": pd.NA, "pass_hat_k": 0.0,
              "pass_at_k": 0.0} for k in range(1, kmax + 1)]
    return PassKResult(table=pd.DataFrame(rows), run_id="r", suite_tasks=list(counts), note="")


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_pass_hat_k_band_never_rises_and_does_not_jump():
    summary = views.pass_k_summary(_pass_k(COUNTS))
    hat = summary[summary["measure"] == "pass^k"].sort_values("k")
    at = summary[summary["measure"] == "pass@k"].sort_values("k")
    # pass^k never rises with k, so neither may its band; pass@k's never falls
    assert hat["high"].is_monotonic_decreasing and hat["low"].is_monotonic_decreasing
    assert at["low"].is_monotonic_increasing and at["high"].is_monotonic_increasing
    assert ((summary["low"] <= summary["rate"]) & (summary["rate"] <= summary["high"])).all()
    # k = 9: one task at 0.1, four at 0 — 50 attempts hold five blocks of 9, not ~50 observations
    # (the uncapped interval said [0.002, 0.168], then [0, 0.434] at k = 10)
    assert hat.loc[hat["k"] == 9, "high"].item() > 0.3
    # k = 1 is the suite rate and keeps the header's interval
    s = suite_rate([c / n for n, c in COUNTS.values()])
    first = hat[hat["k"] == 1].iloc[0]
    assert (first["low"], first["high"]) == pytest.approx((s.low, s.high))


def _scores(suite: pd.DataFrame) -> ScoresResult:
    return ScoresResult(table=pd.DataFrame(), run_id="r", tasks=pd.DataFrame(), suite=suite)


def test_dimension_whiskers_stay_inside_0_and_1():
    suite = pd.DataFrame({"dimension": ["loop_detection", "task_completion", "overall"],
                          "mean": [0.9867, 0.08, 0.93], "sd": [0.094, 0.35, float("nan")], "n": [50, 50, 50]})
    fig = views.dimension_chart(_scores(suite))
    ends = [x for c in fig.axes[0].collections for seg in c.get_segments() for x, _ in seg]
    assert ends and min(ends) >= 0.0 and max(ends) <= 1.0
    assert max(ends) == pytest.approx(1.0)  # the whisker still reaches as far as it may


def _legend_beside_axes(fig) -> None:
    fig.canvas.draw()
    ax = fig.axes[0]
    legend = ax.get_legend()
    assert legend is not None
    assert legend.get_window_extent().x0 >= ax.get_window_extent().x1  # right of the plot area
    assert legend.get_window_extent().x1 <= fig.bbox.x1 + 1  # and inside the image


@pytest.fixture(scope="module")
def degraded(mock_db):
    db, _, run_b = mock_db
    return db, run_b, aeh.load_run(run_b, db)


def test_failure_bars_fill_their_row_and_legends_sit_outside(degraded):
    db, run_b, result = degraded
    views.setup()
    fig = views.failure_chart(result)
    bars = fig.axes[0].patches
    failing = result.table[result.table[[c for c in result.table if c.startswith("fail_")]].sum(axis=1) > 0]
    assert bars and {round(b.get_height(), 3) for b in bars} == {0.7}  # one full bar per task
    assert len({round(b.get_y(), 3) for b in bars}) == len(failing)
    _legend_beside_axes(fig)
    for chart in (views.latency_chart(aeh.attempts(run_b, db)), views.interval_chart(result),
                  views.pass_k_chart(views.pass_k_summary(aeh.pass_k(run_b, db)))):
        _legend_beside_axes(chart)
