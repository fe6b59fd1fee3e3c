"""Slow drift: a steady decline over a series of runs that no adjacent comparison flags.

Attempt-level linear probability model `success ~ run_index + C(task)`: the task fixed effects
absorb how hard each task is, the slope is the change in success rate per run, and its standard
error is cluster-robust with tasks as clusters (repeats of a task are not independent draws).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["DRIFT_METHOD", "DriftTrend", "drift_trend"]

DRIFT_METHOD = (
    "OLS of attempt success on run index with task fixed effects (statsmodels), "
    "cluster-robust SE by task, t-interval; cumulative = slope × (runs − 1)"
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
    attempts: int
    method: str = DRIFT_METHOD


def drift_trend(task_ids: Sequence[str], run_index: Sequence[int], success: Sequence[bool],
                alpha: float = 0.05) -> DriftTrend:
    """Fit the trend over attempt rows (one row per attempt of each run)."""
    import numpy as np
    import pandas as pd
    import statsmodels.formula.api as smf

    frame = pd.DataFrame({"task": list(task_ids), "run": list(run_index),
                          "y": np.asarray(success, dtype=float)})
    runs, tasks = frame["run"].nunique(), frame["task"].nunique()
    nan = math.nan
    if runs < 3 or tasks < 2 or frame["y"].nunique() < 2:
        # Two runs are a comparison, not a trend; constant outcomes carry no slope information.
        return DriftTrend(nan, nan, nan, nan, nan, nan, runs, tasks, len(frame),
                          DRIFT_METHOD + " — not fitted: needs ≥ 3 runs, ≥ 2 tasks and varied outcomes")
    groups = pd.factorize(frame["task"])[0]
    fit = smf.ols("y ~ run + C(task)", data=frame).fit(
        cov_type="cluster", cov_kwds={"groups": groups}, use_t=True)
    slope, se = float(fit.params["run"]), float(fit.bse["run"])
    low, high = (float(v) for v in fit.conf_int(alpha=alpha).loc["run"])
    return DriftTrend(slope, se, low, high, float(fit.pvalues["run"]), slope * (runs - 1),
                      runs, tasks, len(frame))
