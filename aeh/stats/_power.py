"""Exact power of the regression gate, attempts needed, minimum detectable drop.

Power uses the same test as ``compare_tasks`` (two-sided Boschloo via
``two_sample_test``) with equal attempts n per side. For each (n, alpha) the rejection
region {(k_a, k_b): k_b < k_a and p < alpha} is computed once and cached; power is then
an exact sum of binomial pmf products over that region.

Building the region does not call Boschloo for all (n+1)^2 tables. Boschloo's p-value is
the supremum over the nuisance parameter of P(T <= t_obs), where T is Fisher's one-sided
p; it is therefore nondecreasing in t_obs. Ordering the drop tables by Fisher's one-sided
p (``scipy.stats.hypergeom.cdf``, the statistic scipy's Boschloo uses) makes the region a
prefix of that order, found by binary search with ~log2(n^2) Boschloo calls. The tests
check this against brute force for small n.

Multiplicity: with ``n_tasks`` tasks of which one truly changes, BH rejects that task
whenever p <= fdr / n_tasks (it is then the smallest p and passes step 1). Using
alpha_eff = fdr / n_tasks is therefore a conservative bound (power is at least this);
with n_tasks == 1 alpha_eff = fdr exactly.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ._compare import TaskCounts, two_sample_test

__all__ = [
    "TaskMDE",
    "attempts_for_power",
    "minimum_detectable_drop",
    "per_task_mde",
    "power_of_comparison",
    "rejection_region",
]


def _alpha_eff(fdr: float, n_tasks: int) -> float:
    if n_tasks < 1:
        raise ValueError("n_tasks must be >= 1")
    if not 0 < fdr < 1:
        raise ValueError("fdr must be in (0, 1)")
    return fdr / n_tasks


@lru_cache(maxsize=1024)
def _region(n: int, alpha: float) -> np.ndarray:
    from scipy import stats  # heavy: loaded on first use

    ka, kb = np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij")
    drop = kb < ka
    cand_a, cand_b = ka[drop], kb[drop]
    # Fisher one-sided statistic for "B lower", as in scipy's Boschloo (column = sample).
    fisher = stats.hypergeom.cdf(cand_b, 2 * n, cand_a + cand_b, n)
    order = np.argsort(fisher, kind="stable")
    lo, hi = 0, len(order)
    while lo < hi:
        mid = (lo + hi) // 2
        i = order[mid]
        if two_sample_test(int(cand_a[i]), n, int(cand_b[i]), n) < alpha:
            lo = mid + 1
        else:
            hi = mid
    region = np.zeros((n + 1, n + 1), dtype=bool)
    chosen = order[:lo]
    region[cand_a[chosen], cand_b[chosen]] = True
    region.setflags(write=False)
    return region


def rejection_region(n: int, alpha: float) -> np.ndarray:
    """Boolean (n+1)x(n+1) matrix R[k_a, k_b]: a drop flagged at level alpha, n per side."""
    if n < 1:
        raise ValueError("n must be >= 1")
    return _region(int(n), float(alpha))


def power_of_comparison(
    p_base: float, p_new: float, n: int, fdr: float = 0.05, n_tasks: int = 1
) -> float:
    """Exact probability that one task going p_base -> p_new (n attempts each) is flagged."""
    for p in (p_base, p_new):
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"rates must be in [0, 1], got {p}")
    region = rejection_region(n, _alpha_eff(fdr, n_tasks))
    from scipy import stats  # heavy: loaded on first use

    ks = np.arange(n + 1)
    pa = stats.binom.pmf(ks, n, p_base)
    pb = stats.binom.pmf(ks, n, p_new)
    return float(pa @ region.astype(float) @ pb)


def _as_rates(p_base: float | Sequence[float]) -> list[float]:
    if isinstance(p_base, (int, float)):
        return [float(p_base)]
    rates = [float(p) for p in p_base]
    if not rates:
        raise ValueError("p_base is empty")
    return rates


def attempts_for_power(
    p_base: float | Sequence[float],
    drop: float,
    power: float = 0.8,
    fdr: float = 0.05,
    n_tasks: int = 1,
    max_n: int = 200,
) -> int:
    """Smallest attempts per side (scanning n = 1, 2, ...) whose exact power >= ``power``.

    For a sequence of base rates, the max over tasks. Raises ValueError if ``max_n``
    is not enough. Cost grows with n (Boschloo calls at large n take ~0.05-0.1 s).
    """
    if drop <= 0:
        raise ValueError("drop must be > 0")
    needed = 0
    for base in _as_rates(p_base):
        new = base - drop
        if new < -1e-12:
            raise ValueError(f"drop {drop} exceeds base rate {base}")
        new = max(new, 0.0)
        for n in range(1, max_n + 1):
            if power_of_comparison(base, new, n, fdr, n_tasks) >= power:
                needed = max(needed, n)
                break
        else:
            raise ValueError(
                f"power {power} not reached for {base} -> {new} within max_n={max_n}"
            )
    return needed


def minimum_detectable_drop(
    p_base: float, n: int, power: float = 0.8, fdr: float = 0.05, n_tasks: int = 1
) -> float:
    """Smallest drop on a 0.01 grid detected with at least ``power``; nan if none."""
    steps = int(math.floor(p_base * 100 + 1e-9))
    for i in range(1, steps + 1):
        drop = i / 100
        new = max(round(p_base - drop, 10), 0.0)
        if power_of_comparison(p_base, new, n, fdr, n_tasks) >= power:
            return drop
    return math.nan


@dataclass(frozen=True)
class TaskMDE:
    """The smallest per-task drop the design detects with ``power`` (nan: no drop can).

    base_rate: mean baseline rate over the tested tasks, the rate the drop is taken from.
    n: attempts per side (median over tested tasks of min(n_a, n_b)).
    lone_task_flaggable: False when even all-pass vs all-fail cannot survive BH for a
    single task; then only the suite level can flag a regression.
    """

    drop: float
    n: int
    base_rate: float
    n_tasks: int
    power: float
    fdr: float
    lone_task_flaggable: bool
    text: str


def per_task_mde(rows: Sequence[TaskCounts], fdr: float = 0.05, power: float = 0.8) -> TaskMDE | None:
    """What size of per-task drop this comparison could detect; None if no task was tested.

    Uses ``minimum_detectable_drop`` (exact Boschloo power with alpha = fdr / tasks, the
    conservative bound for one lone regressed task under BH)."""
    tested = [r for r in (TaskCounts(*r) for r in rows) if r.n_a > 0 and r.n_b > 0]
    if not tested:
        return None
    n_tasks = len(tested)
    n = max(1, int(np.median([min(r.n_a, r.n_b) for r in tested])))
    base = round(float(np.mean([r.k_a / r.n_a for r in tested])), 2)
    best = min(two_sample_test(r.n_a, r.n_a, 0, r.n_b) for r in tested)
    flaggable = best * n_tasks < fdr
    drop = minimum_detectable_drop(base, n, power=power, fdr=fdr, n_tasks=n_tasks) if base > 0 else math.nan
    where = f"at n = {n} ({power:.0%} power, from the mean baseline rate {base:.2f}, BH over {n_tasks} tasks at FDR {fdr})"  # noqa: E501
    if math.isnan(drop):
        text = f"per task, this design cannot detect any drop {where}; only the suite-level test can flag a regression"
    else:
        text = f"per task, this design can only detect drops of ≥ {drop:.2f} {where}"
    return TaskMDE(
        drop=drop, n=n, base_rate=base, n_tasks=n_tasks, power=power, fdr=fdr, lone_task_flaggable=flaggable, text=text
    )
