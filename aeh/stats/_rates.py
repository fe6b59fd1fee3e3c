"""Per-task rates, Wilson intervals, pass^k / pass@k and the suite-level rate."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ._dist import norm_sf, t_ppf
from ._dist import wilson_confint as proportion_confint

__all__ = [
    "SUITE_RATE_METHOD",
    "Rate",
    "SuiteRate",
    "pass_at_k",
    "pass_hat_k",
    "pass_k_table",
    "rate",
    "suite_rate",
    "wilson_interval",
]

SUITE_RATE_METHOD = (
    "mean of per-task rates; SE across tasks (Miller 2024); Wilson interval at the effective "
    "number of tasks with t(T-1) critical value (Kott-Carr)"
)
SUITE_RATE_DEGENERATE_METHOD = (
    "mean of per-task rates; every task scored the same, so the SE across tasks is 0 and a "
    "t-interval would collapse: Wilson interval with each task as one observation"
)
SUITE_RATE_ONE_TASK_METHOD = (
    "one task: a suite interval needs ≥ 2 tasks (the spread across tasks); see the task's own "
    "Wilson interval"
)


def _check_counts(successes: int, n: int) -> None:
    if n < 0 or successes < 0 or successes > n:
        raise ValueError(f"need 0 <= successes <= n, got successes={successes}, n={n}")


def wilson_interval(successes: int, n: int, alpha: float = 0.05) -> tuple[float, float]:
    """Wilson score interval for successes/n; (nan, nan) when n == 0."""
    _check_counts(successes, n)
    if n == 0:
        return (math.nan, math.nan)
    low, high = proportion_confint(successes, n, alpha=alpha, method="wilson")
    return (float(low), float(high))


@dataclass(frozen=True)
class Rate:
    """A rate with its n and Wilson interval."""

    successes: int
    n: int
    rate: float
    low: float
    high: float


def rate(successes: int, n: int, alpha: float = 0.05) -> Rate:
    """Point estimate k/n (nan when n == 0) plus its Wilson interval."""
    low, high = wilson_interval(successes, n, alpha)
    point = successes / n if n else math.nan
    return Rate(successes=successes, n=n, rate=point, low=low, high=high)


def _check_k(n: int, c: int, k: int) -> None:
    _check_counts(c, n)
    if k < 1 or k > n:
        raise ValueError(f"need 1 <= k <= n, got k={k}, n={n}")


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Unbiased pass^k (tau-bench): P(k i.i.d. attempts ALL succeed) = C(c,k)/C(n,k)."""
    _check_k(n, c, k)
    return math.comb(c, k) / math.comb(n, k)


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k (Chen et al. 2021): 1 - C(n-c,k)/C(n,k)."""
    _check_k(n, c, k)
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_k_table(
    per_task: Mapping[str, tuple[int, int]], kmax: int | None = None
) -> list[dict[str, float | int]]:
    """Mean pass^k and pass@k across one fixed set of tasks for k = 1..kmax.

    ``per_task`` maps task id -> (n, c). Every row averages the same tasks, those with
    n >= kmax, so pass^k never rises and pass@k never falls as k grows (averaging a
    different task set at each k can make pass^5 exceed pass^1). ``kmax`` defaults to the
    smallest n, so every task with attempts counts; a larger ``kmax`` (up to the largest n)
    leaves out the tasks with n < kmax from every row, and ``tasks`` says how many remain.
    """
    counts = [(n, c) for n, c in per_task.values() if n > 0]
    if not counts:
        return []
    for n, c in counts:
        _check_counts(c, n)
    top = max(n for n, _ in counts)
    if kmax is None:
        kmax = min(n for n, _ in counts)
    if kmax < 1 or kmax > top:
        raise ValueError(f"kmax must be in 1..{top}, got {kmax}")
    eligible = [(n, c) for n, c in counts if n >= kmax]
    return [
        {
            "k": k,
            "pass_hat_k": float(np.mean([pass_hat_k(n, c, k) for n, c in eligible])),
            "pass_at_k": float(np.mean([pass_at_k(n, c, k) for n, c in eligible])),
            "tasks": len(eligible),
        }
        for k in range(1, kmax + 1)
    ]


@dataclass(frozen=True)
class SuiteRate:
    """Suite rate: unweighted mean of per-task rates with a task-clustered interval."""

    mean: float
    se: float
    low: float
    high: float
    n_tasks: int
    method: str


def suite_rate(task_rates: Sequence[float], alpha: float = 0.05, *, max_n: float | None = None) -> SuiteRate:
    """Mean of per-task rates m, SE = sd(ddof=1)/sqrt(T), and the Wilson interval for m at the
    effective sample size m(1 - m)/SE² with the t_{T-1} critical value (Kott & Carr 1997).

    Tasks are the unit (clusters), per Miller 2024 (arXiv:2411.00640). The plain t-interval
    m ± t·SE undercovers when most rates sit near 1 (0.92 for 10 tasks of a strong agent; its
    SE is smallest exactly when the sample missed the weak tasks); the Wilson form bends toward
    the middle as Wilson does for k/n (docs/statistics.md has the coverage). When every task has the
    same rate the spread is 0 and the t-interval would collapse to a point, so the interval is
    then Wilson's with each task as one observation. With one task there is no spread across
    tasks: the SE and interval are nan and the method says a suite interval needs ≥ 2 tasks
    (the task's own Wilson interval is the one to show); with none everything is nan.

    `max_n` caps the effective sample size at the number of independent observations behind the
    rates (for a mean of pass^k estimates: the Σ n_i / k disjoint blocks of k attempts). Rates that
    barely spread (pass^k at a large k, mostly 0) would otherwise claim far more than the attempts
    hold: n_eff grows without bound as the spread shrinks.
    """
    x = np.asarray(task_rates, dtype=float)
    if np.isnan(x).any():
        raise ValueError("task_rates must not contain nan (drop tasks with n == 0 first)")
    t_count = int(x.size)
    if t_count == 0:
        return SuiteRate(math.nan, math.nan, math.nan, math.nan, 0, SUITE_RATE_METHOD)
    mean = float(x.mean())
    if t_count == 1:
        return SuiteRate(mean, math.nan, math.nan, math.nan, 1, SUITE_RATE_ONE_TASK_METHOD)
    se = float(x.std(ddof=1) / math.sqrt(t_count))
    if se == 0.0:
        # All tasks at the same rate (typically all 0 or all 1): zero spread is not certainty.
        # Treat each task as one observation, as Wilson does for attempts at the extremes.
        low, high = proportion_confint(mean * t_count, t_count, alpha=alpha, method="wilson")
        return SuiteRate(mean, se, float(low), float(high), t_count, SUITE_RATE_DEGENERATE_METHOD)
    n_eff = mean * (1 - mean) / se ** 2
    if max_n is not None:
        n_eff = min(n_eff, max_n)
    # Wilson's z replaced by t_{T-1}: the level whose normal quantile is that t value
    alpha_t = float(2 * norm_sf(t_ppf(1 - alpha / 2, df=t_count - 1)))
    low, high = proportion_confint(mean * n_eff, n_eff, alpha=alpha_t, method="wilson")
    return SuiteRate(mean, se, float(np.clip(low, 0, 1)), float(np.clip(high, 0, 1)), t_count, SUITE_RATE_METHOD)
