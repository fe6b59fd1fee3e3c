"""Slow drift: a steady decline over a series of runs that no adjacent comparison flags.

Runs are the unit. Everything that differs between runs (the provider's day, load, sampling
seed, a silent model update) moves all attempts of a run together, so attempts from one run are
not independent evidence about the trend. An attempt-level regression on run index treats them as
if they were and raises false alarms as run-to-run noise grows. So the trend is fitted on one
number per run:

    run rate_r = mean over the common tasks of (successes / valid attempts) in run r
    run rate_r ~ run_index                  (statsmodels OLS, n = runs, t with runs − 2 df)

"Common tasks" are the tasks with a valid attempt in every run of the window, so every run rate
averages the same tasks and task difficulty cancels out of the slope. The residual variance then
holds both binomial noise and run-to-run noise, whatever their mix.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["DRIFT_METHOD", "MIN_DRIFT_RUNS", "DriftTrend", "drift_trend"]

MIN_DRIFT_RUNS = 4
"""Fewest runs a trend is fitted on: with 3 runs the slope's t-interval has 1 degree of freedom
(t = 12.7), which can flag nothing; 4 runs give 2."""

DRIFT_METHOD = (
    "OLS of each run's mean per-task success rate (tasks present in every run) on run index "
    "(statsmodels), n = runs, t-interval with runs − 2 df; cumulative = slope × (runs − 1)"
)


@dataclass(frozen=True)
class DriftTrend:
    slope: float
    """Change in success rate per run (negative = declining)."""
    se: float
    low: float
    high: float
    p: float
    cumulative: float
    """Slope × (runs − 1): the modelled change from the first run to the last."""
    runs: int
    tasks: int
    """Tasks common to every run (the ones the run rates average)."""
    attempts: int
    method: str = DRIFT_METHOD
    fitted: bool = True
    """False when there were too few runs (or no common task) to judge a trend."""


def drift_trend(task_ids: Sequence[str], run_index: Sequence[int], success: Sequence[bool],
                alpha: float = 0.05, min_runs: int = MIN_DRIFT_RUNS) -> DriftTrend:
    """Fit the trend over attempt rows (one row per valid attempt of each run)."""
    # heavy: loaded on first use
    import numpy as np
    import pandas as pd
    import statsmodels.formula.api as smf

    frame = pd.DataFrame({"task": list(task_ids), "run": list(run_index),
                          "y": np.asarray(success, dtype=float)})
    runs = int(frame["run"].nunique())
    cells = frame.groupby(["run", "task"])["y"].mean().unstack("task")
    common = cells.dropna(axis=1)  # tasks with a valid attempt in every run
    tasks = int(common.shape[1])
    nan = math.nan
    if runs < min_runs or tasks < 1:
        why = f"needs ≥ {min_runs} runs" if runs < min_runs else "no task has attempts in every run"
        return DriftTrend(nan, nan, nan, nan, nan, nan, runs, tasks, len(frame),
                          DRIFT_METHOD + f" — not fitted: {why}", fitted=False)
    per_run = pd.DataFrame({"run": common.index.astype(float), "rate": common.mean(axis=1).to_numpy()})
    if np.ptp(per_run["rate"].to_numpy()) == 0.0:
        # Identical run rates: no trend at all, and OLS would report a zero SE with a nan p.
        return DriftTrend(0.0, 0.0, 0.0, 0.0, 1.0, 0.0, runs, tasks, len(frame),
                          DRIFT_METHOD + " — every run has the same rate")
    fit = smf.ols("rate ~ run", data=per_run).fit()
    slope, se = float(fit.params["run"]), float(fit.bse["run"])
    low, high = (float(v) for v in fit.conf_int(alpha=alpha).loc["run"])
    return DriftTrend(slope, se, low, high, float(fit.pvalues["run"]), slope * (runs - 1),
                      runs, tasks, len(frame))
