"""Per-task regression tests (Boschloo + BH), the paired suite-level difference, and the
two-level regression gate that combines them."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

import numpy as np

from ._dist import norm_ppf, norm_sf, t_ppf

__all__ = [
    "SUITE_ALPHA",
    "GateVerdict",
    "regression_gate",
    "task_difference_interval",
    "PAIRED_DIFF_METHOD",
    "PAIRED_DIFF_WITHIN_METHOD",
    "PairedDiff",
    "TaskComparison",
    "TaskCounts",
    "compare_tasks",
    "paired_suite_difference",
    "two_sample_test",
    "BOSCHLOO_MAX_N",
]

PAIRED_DIFF_WITHIN_METHOD = (
    "mean of per-task differences (B - A); every task moved by the same amount, so the SE across "
    "tasks is 0: normal interval and z-test on the within-task sampling SE (Agresti-Caffo)"
)
PAIRED_DIFF_METHOD = (
    "mean of per-task differences (B - A); t-interval on SE across tasks; "
    "paired t-test (scipy.stats.ttest_rel)"
)


#: Above this many attempts per side Fisher's exact test replaces Boschloo's: both are exact,
#: their power converges as n grows, and scipy's Boschloo costs ~50 ms per table at n = 100.
BOSCHLOO_MAX_N = 30


def two_sample_test(k_a: int, n_a: int, k_b: int, n_b: int) -> float:
    """Two-sided exact p-value for k_a/n_a vs k_b/n_b: Boschloo's test up to BOSCHLOO_MAX_N
    attempts per side (where its extra power over Fisher matters), Fisher's beyond.

    nan if either n is 0; 1.0 for degenerate tables (both all-success or all-failure).
    Results are cached on the four integers.
    """
    for k, n in ((k_a, n_a), (k_b, n_b)):
        if n < 0 or k < 0 or k > n:
            raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")
    return _boschloo_p(int(k_a), int(n_a), int(k_b), int(n_b))


@lru_cache(maxsize=65536)
def _boschloo_p(k_a: int, n_a: int, k_b: int, n_b: int) -> float:
    if n_a == 0 or n_b == 0:
        return math.nan
    # scipy's convention: each COLUMN is one binomial sample (column totals are fixed).
    table = [[k_a, k_b], [n_a - k_a, n_b - k_b]]
    if (k_a + k_b) in (0, n_a + n_b):
        return 1.0  # no variation at all: identical rates, nothing to test
    from scipy import stats  # heavy: loaded on first use

    if max(n_a, n_b) > BOSCHLOO_MAX_N:
        return float(stats.fisher_exact(table, alternative="two-sided").pvalue)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p = float(stats.boschloo_exact(table, alternative="two-sided").pvalue)
    if math.isnan(p):
        # Not seen for n_a, n_b > 0 (all 2,470 tables with n <= 12 checked, scipy 1.17);
        # fall back to Fisher rather than letting a nan through.
        p = float(stats.fisher_exact(table, alternative="two-sided").pvalue)
    return min(max(p, 0.0), 1.0)


class TaskCounts(NamedTuple):
    """Successes / attempts for one task in baseline A and new run B."""

    task_id: str
    k_a: int
    n_a: int
    k_b: int
    n_b: int


@dataclass(frozen=True)
class TaskComparison:
    """Per-task result of comparing baseline A with new run B."""

    task_id: str
    k_a: int
    n_a: int
    k_b: int
    n_b: int
    rate_a: float
    rate_b: float
    delta: float
    p: float
    q: float
    regressed: bool
    improved: bool
    note: str = ""
    delta_low: float = math.nan
    delta_high: float = math.nan


def task_difference_interval(k_a: int, n_a: int, k_b: int, n_b: int,
                             alpha: float = 0.05) -> tuple[float, float]:
    """(1 - alpha) Newcombe hybrid-score interval of rate_b - rate_a (statsmodels'
    ``confint_proportions_2indep(method="newcomb")``, built from the two Wilson intervals);
    (nan, nan) if either n is 0. Cached on the integers."""
    return _newcombe(int(k_a), int(n_a), int(k_b), int(n_b), float(alpha))


@lru_cache(maxsize=65536)
def _newcombe(k_a: int, n_a: int, k_b: int, n_b: int, alpha: float) -> tuple[float, float]:
    if n_a == 0 or n_b == 0:
        return math.nan, math.nan
    from statsmodels.stats.proportion import confint_proportions_2indep  # heavy: loaded on first use

    # statsmodels' "diff" is count1/nobs1 - count2/nobs2, so B goes first for B - A.
    low, high = confint_proportions_2indep(k_b, n_b, k_a, n_a, method="newcomb",
                                           compare="diff", alpha=alpha)
    return float(low), float(high)


def compare_tasks(rows: Sequence[TaskCounts], fdr: float = 0.05) -> list[TaskComparison]:
    """Boschloo p per task, Benjamini-Hochberg q across tasks; flag q < fdr with direction.

    Tasks with n == 0 on either side get p = q = nan and are left out of the BH family.
    """
    # heavy: loaded on first use
    from statsmodels.stats.multitest import multipletests
    from statsmodels.stats.proportion import confint_proportions_2indep

    rows = [TaskCounts(*r) for r in rows]
    pvals = [two_sample_test(r.k_a, r.n_a, r.k_b, r.n_b) for r in rows]
    tested = [i for i, r in enumerate(rows) if r.n_a > 0 and r.n_b > 0]
    qvals = [math.nan] * len(rows)
    if tested:
        _, q_arr, _, _ = multipletests([pvals[i] for i in tested], alpha=fdr, method="fdr_bh")
        for i, q in zip(tested, q_arr, strict=False):
            qvals[i] = float(q)
    intervals = [(math.nan, math.nan)] * len(rows)
    if tested:
        # One vectorised statsmodels call: per table it costs ~0.6 ms, 1,000 tasks 0.6 s.
        t = [rows[i] for i in tested]
        lows, highs = confint_proportions_2indep(
            np.array([r.k_b for r in t]), np.array([r.n_b for r in t]),
            np.array([r.k_a for r in t]), np.array([r.n_a for r in t]), method="newcomb", compare="diff")
        for i, low, high in zip(tested, np.atleast_1d(lows), np.atleast_1d(highs), strict=False):
            intervals[i] = (float(low), float(high))
    out = []
    for r, p, q, (low, high) in zip(rows, pvals, qvals, intervals, strict=False):
        rate_a = r.k_a / r.n_a if r.n_a else math.nan
        rate_b = r.k_b / r.n_b if r.n_b else math.nan
        delta = rate_b - rate_a
        significant = not math.isnan(q) and q < fdr
        note = "" if not math.isnan(q) else "n == 0 on one side: not tested, excluded from BH"
        out.append(
            TaskComparison(
                task_id=r.task_id, k_a=r.k_a, n_a=r.n_a, k_b=r.k_b, n_b=r.n_b,
                rate_a=rate_a, rate_b=rate_b, delta=delta, p=p, q=q,
                regressed=significant and delta < 0,
                improved=significant and delta > 0,
                note=note, delta_low=low, delta_high=high,
            )
        )
    return out


@dataclass(frozen=True)
class PairedDiff:
    """Suite-level paired difference B - A over tasks."""

    mean_delta: float
    se: float
    low: float
    high: float
    p: float
    n_tasks: int
    method: str


def paired_suite_difference(
    rates_a: Sequence[float], rates_b: Sequence[float], alpha: float = 0.05,
    counts: Sequence[tuple[int, int, int, int]] | None = None,
) -> PairedDiff:
    """Mean per-task difference B - A, SE = sd(diffs, ddof=1)/sqrt(T), t-interval, paired t p."""
    a = np.asarray(rates_a, dtype=float)
    b = np.asarray(rates_b, dtype=float)
    if a.shape != b.shape:
        raise ValueError("rates_a and rates_b must be paired (same length, same task order)")
    diffs = b - a
    t_count = int(diffs.size)
    if t_count < 2:
        mean = float(diffs.mean()) if t_count else math.nan
        return PairedDiff(mean, math.nan, math.nan, math.nan, math.nan, t_count,
                          PAIRED_DIFF_METHOD)
    mean = float(diffs.mean())
    se = float(diffs.std(ddof=1) / math.sqrt(t_count))
    if se == 0.0:
        # Every task moved by exactly the same amount: zero spread is not certainty. Fall back
        # on the sampling noise inside each task (needs the counts).
        return _within_task_difference(mean, t_count, counts, alpha)
    from scipy import stats  # heavy: loaded on first use

    half = t_ppf(1 - alpha / 2, df=t_count - 1) * se
    p = float(stats.ttest_rel(b, a).pvalue)
    return PairedDiff(mean, se, mean - half, mean + half, p, t_count, PAIRED_DIFF_METHOD)


def _within_task_difference(mean: float, t_count: int,
                            counts: Sequence[tuple[int, int, int, int]] | None,
                            alpha: float) -> PairedDiff:
    """SE of the mean difference from each task's binomial noise, with Agresti-Caffo's
    add-one smoothing so that 0/n and n/n still carry uncertainty."""
    if not counts:
        # No change at all is no evidence of change (p = 1); its width is still unknown.
        return PairedDiff(mean, math.nan, math.nan, math.nan, 1.0 if mean == 0 else math.nan, t_count,
                          "every task moved by the same amount and no counts were given: "
                          "no interval")
    var = 0.0
    for k_a, n_a, k_b, n_b in counts:
        pa, pb = (k_a + 1) / (n_a + 2), (k_b + 1) / (n_b + 2)
        var += pa * (1 - pa) / (n_a + 2) + pb * (1 - pb) / (n_b + 2)
    se = math.sqrt(var) / len(counts)
    z = norm_ppf(1 - alpha / 2)
    p = float(2 * norm_sf(abs(mean) / se)) if se > 0 else 1.0
    return PairedDiff(mean, se, max(-1.0, mean - z * se), min(1.0, mean + z * se), p, t_count,
                      PAIRED_DIFF_WITHIN_METHOD)


# -- the two-level regression gate --------------------------------------------------------

#: Two-sided level of the suite-level paired interval. The suite regresses when the whole
#: (1 - SUITE_ALPHA) interval lies below 0: a one-sided test at SUITE_ALPHA / 2. Over three
#: seeds × 700 pairs per cell (benchmarks/gate_calibration.py) the whole gate's A/A rate at 0.05
#: is 2.2–4.1% on 32 tasks (upper Wilson bound ≤ 5.0%) and at 0.025 1.1–2.4%, while 0.05 catches a
#: uniform 0.15 drop at n = 5 in 0.84 of pairs against 0.76: 0.05 keeps A/A ≤ 5% with more power.
SUITE_ALPHA = 0.05


@dataclass(frozen=True)
class GateVerdict:
    """The regression verdict of B against baseline A, at both levels.

    regressed: task_level or suite_level; this is what `aeh compare` exits 1 on.
    task_level: tasks regressed after Benjamini-Hochberg at ``fdr``.
    suite_level: the paired suite difference's (1 - suite_alpha) interval lies below 0.
    paired: tasks with attempts in both runs (the BH family and the suite's pairs).
    reasons: one sentence per level; headline: one line naming the levels that regressed.
    """

    regressed: bool
    task_level: tuple[str, ...]
    suite_level: bool
    improved: tuple[str, ...]
    suite_improved: bool
    tasks: tuple[TaskComparison, ...]
    suite: PairedDiff
    paired: tuple[str, ...]
    fdr: float
    suite_alpha: float
    reasons: tuple[str, ...]
    headline: str


def regression_gate(rows: Sequence[TaskCounts], fdr: float = 0.05,
                    suite_alpha: float = SUITE_ALPHA) -> GateVerdict:
    """Per-task Boschloo + BH at ``fdr`` and the paired suite test at ``suite_alpha``; B has
    regressed when either level finds a drop. The suite level decides alone when no single
    task can reach significance (few attempts, many tasks)."""
    tasks = tuple(compare_tasks(rows, fdr=fdr))
    paired = [c for c in tasks if c.n_a > 0 and c.n_b > 0]
    suite = paired_suite_difference(
        [c.rate_a for c in paired], [c.rate_b for c in paired], alpha=suite_alpha,
        counts=[(c.k_a, c.n_a, c.k_b, c.n_b) for c in paired],
    )
    # nan bounds (fewer than 2 paired tasks) compare False: no suite-level verdict.
    suite_level = bool(suite.high < 0)
    task_level = tuple(c.task_id for c in tasks if c.regressed)
    reasons = (_task_reason(task_level, len(paired), fdr), _suite_reason(suite, suite_level, suite_alpha))
    levels = [name for name, hit in (("task", bool(task_level)), ("suite", suite_level)) if hit]
    if len(levels) == 2:
        headline = f"REGRESSED at the task level ({len(task_level)} tasks) and the suite level"
    elif levels == ["task"]:
        headline = f"REGRESSED at the task level ({len(task_level)} tasks after Benjamini–Hochberg)"
    elif levels == ["suite"]:
        headline = "REGRESSED at the suite level (no single task significant after Benjamini–Hochberg)"
    else:
        headline = "no regression at either level (per task after Benjamini–Hochberg, paired suite test)"
    return GateVerdict(
        regressed=bool(levels), task_level=task_level, suite_level=suite_level,
        improved=tuple(c.task_id for c in tasks if c.improved), suite_improved=bool(suite.low > 0),
        tasks=tasks, suite=suite, paired=tuple(c.task_id for c in paired), fdr=fdr,
        suite_alpha=suite_alpha, reasons=reasons, headline=headline,
    )


def _task_reason(task_level: tuple[str, ...], n_tested: int, fdr: float) -> str:
    if task_level:
        return (f"task level: {len(task_level)} of {n_tested} tasks regressed after Benjamini–Hochberg "
                f"(FDR {fdr}): {', '.join(task_level)}")
    return f"task level: no task regressed significantly after Benjamini–Hochberg (FDR {fdr}, {n_tested} tasks)"


def _p_text(p: float) -> str:
    """Three decimals, but never "0.000" for a p-value that is small, not zero."""
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def _suite_reason(suite: PairedDiff, suite_level: bool, alpha: float) -> str:
    if math.isnan(suite.high):
        return f"suite level: not tested ({suite.n_tasks} task(s) in both runs; needs 2)"
    level = f"{(1 - alpha) * 100:g}%"  # 97.5% stays 97.5%, not a rounded 98%
    interval = (f"paired delta {suite.mean_delta:+.3f}, {level} CI [{suite.low:+.3f}, {suite.high:+.3f}], "
                f"p {_p_text(suite.p)}, over {suite.n_tasks} tasks")
    if suite_level:
        return f"suite level: REGRESSED — {interval}; the interval lies below 0"
    return f"suite level: no significant drop — {interval}"
