"""Monte Carlo calibration of the regression gate (A/A false flags, detection of drops)."""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ._compare import SUITE_ALPHA, TaskCounts, compare_tasks, regression_gate

__all__ = ["GateSimResult", "SimResult", "simulate_aa", "simulate_drop", "simulate_gate"]


@dataclass(frozen=True)
class SimResult:
    """Share of simulated comparisons in which the gate flagged regressions.

    any_flag_rate: trials flagging at least one regression on any task.
    false_flag_rate: trials flagging at least one task whose true rate did not drop.
    detection_rate: trials flagging at least one truly dropped task (nan if none dropped).
    per_task_detection: mean share of truly dropped tasks flagged (nan if none dropped).
    """

    trials: int
    n_tasks: int
    n: int
    fdr: float
    any_flag_rate: float
    false_flag_rate: float
    detection_rate: float
    per_task_detection: float
    seconds: float


def simulate_drop(
    base_rates: Sequence[float],
    new_rates: Sequence[float],
    n: int,
    trials: int,
    seed: int,
    fdr: float = 0.05,
) -> SimResult:
    """Simulate A ~ Bin(n, base) vs B ~ Bin(n, new) per task and run ``compare_tasks``."""
    base = np.asarray(base_rates, dtype=float)
    new = np.asarray(new_rates, dtype=float)
    if base.shape != new.shape or base.ndim != 1 or base.size == 0:
        raise ValueError("base_rates and new_rates must be non-empty and the same length")
    if trials < 1 or n < 1:
        raise ValueError("trials and n must be >= 1")
    dropped = new < base
    ids = [f"t{i}" for i in range(base.size)]
    rng = np.random.default_rng(seed)
    start = time.perf_counter()
    any_flag = false_flag = detected = 0
    dropped_flagged = 0
    for _ in range(trials):
        k_a = rng.binomial(n, base)
        k_b = rng.binomial(n, new)
        rows = [TaskCounts(t, int(a), n, int(b), n) for t, a, b in zip(ids, k_a, k_b, strict=False)]
        flags = np.array([c.regressed for c in compare_tasks(rows, fdr=fdr)])
        any_flag += bool(flags.any())
        false_flag += bool((flags & ~dropped).any())
        detected += bool((flags & dropped).any())
        dropped_flagged += int((flags & dropped).sum())
    n_dropped = int(dropped.sum())
    return SimResult(
        trials=trials,
        n_tasks=int(base.size),
        n=n,
        fdr=fdr,
        any_flag_rate=any_flag / trials,
        false_flag_rate=false_flag / trials,
        detection_rate=detected / trials if n_dropped else math.nan,
        per_task_detection=dropped_flagged / (trials * n_dropped) if n_dropped else math.nan,
        seconds=time.perf_counter() - start,
    )


def simulate_aa(
    true_rates: Sequence[float], n: int, trials: int, seed: int, fdr: float = 0.05
) -> SimResult:
    """A/A: both runs draw from the same true rates; every flag is a false flag."""
    return simulate_drop(true_rates, true_rates, n, trials, seed, fdr)


@dataclass(frozen=True)
class GateSimResult:
    """Share of simulated comparisons in which the two-level gate (``regression_gate``) fired.

    gate_rate: trials where B counts as regressed (either level): the false-alarm rate
    under A/A, the power under a real drop.
    task_level_rate / suite_level_rate: trials where that level alone fired.
    false_task_rate: trials flagging a task whose true rate did not drop.
    per_task_detection: mean share of truly dropped tasks flagged (nan if none dropped).
    """

    trials: int
    n_tasks: int
    n: int
    fdr: float
    suite_alpha: float
    gate_rate: float
    task_level_rate: float
    suite_level_rate: float
    false_task_rate: float
    per_task_detection: float
    seconds: float


def simulate_gate(
    base_rates: Sequence[float],
    new_rates: Sequence[float],
    n: int,
    trials: int,
    seed: int,
    fdr: float = 0.05,
    suite_alpha: float = SUITE_ALPHA,
    run_sd: float = 0.0,
) -> GateSimResult:
    """Simulate A ~ Bin(n, base) vs B ~ Bin(n, new) per task and run the full gate
    (the same ``regression_gate`` that ``aeh compare`` uses). With ``run_sd``, every run's
    rates are shifted together by one N(0, run_sd) draw (clipped to [0, 1]): the day, load or
    model update that moves a whole run."""
    base = np.asarray(base_rates, dtype=float)
    new = np.asarray(new_rates, dtype=float)
    if base.shape != new.shape or base.ndim != 1 or base.size == 0:
        raise ValueError("base_rates and new_rates must be non-empty and the same length")
    if trials < 1 or n < 1:
        raise ValueError("trials and n must be >= 1")
    dropped = new < base
    ids = [f"t{i}" for i in range(base.size)]
    rng = np.random.default_rng(seed)
    start = time.perf_counter()
    gate = task_level = suite_level = false_task = dropped_flagged = 0
    for _ in range(trials):
        shift_a, shift_b = rng.normal(0.0, run_sd, 2) if run_sd > 0 else (0.0, 0.0)
        k_a = rng.binomial(n, np.clip(base + shift_a, 0, 1))
        k_b = rng.binomial(n, np.clip(new + shift_b, 0, 1))
        rows = [TaskCounts(t, int(a), n, int(b), n) for t, a, b in zip(ids, k_a, k_b, strict=False)]
        verdict = regression_gate(rows, fdr=fdr, suite_alpha=suite_alpha)
        flags = np.array([c.regressed for c in verdict.tasks])
        gate += verdict.regressed
        task_level += bool(verdict.task_level)
        suite_level += verdict.suite_level
        false_task += bool((flags & ~dropped).any())
        dropped_flagged += int((flags & dropped).sum())
    n_dropped = int(dropped.sum())
    return GateSimResult(
        trials=trials, n_tasks=int(base.size), n=n, fdr=fdr, suite_alpha=suite_alpha,
        gate_rate=gate / trials, task_level_rate=task_level / trials,
        suite_level_rate=suite_level / trials, false_task_rate=false_task / trials,
        per_task_detection=dropped_flagged / (trials * n_dropped) if n_dropped else math.nan,
        seconds=time.perf_counter() - start,
    )
