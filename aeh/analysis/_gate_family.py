"""The per-task half of the trajectory gate read as one family of tests.

On a 32-task suite the gate checks ≈ 220 task × dimension bands and asks of every task whether it
went from passing to failing. Read one by one at p < 0.05 (or at 2σ), noise alone trips one of
them in most same-agent pairs. Here every such check carries a one-sided p-value and the whole
family is corrected at once with Benjamini–Hochberg (docs/trajectory.md says why BH).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from statsmodels.stats.multitest import multipletests

__all__ = ["NewlyFailing", "family_q"]


def family_q(pvalues: Sequence[float], alpha: float) -> list[float]:
    """Benjamini–Hochberg q-values over the finite p-values (statsmodels ``multipletests``,
    ``fdr_bh``); a nan p-value (nothing to test) stays nan and is not in the family."""
    tested = [i for i, p in enumerate(pvalues) if not math.isnan(p)]
    q = [math.nan] * len(pvalues)
    if tested:
        _, adjusted, _, _ = multipletests([pvalues[i] for i in tested], alpha=alpha, method="fdr_bh")
        for i, value in zip(tested, adjusted, strict=True):
            q[i] = float(value)
    return q


@dataclass(frozen=True)
class NewlyFailing:
    """A task that passed in the baseline (most attempts succeeded) and fails now (most fail),
    significant after the family correction; with its overall score and its worst dimension."""

    task_id: str
    base: float
    new: float
    worst_dimension: str | None
    worst_delta: float
    p: float
    q: float

    def line(self) -> str:
        """``task: 1.000 -> 0.457 (worst: loop_detection -1.000)``."""
        worst = f" (worst: {self.worst_dimension} {self.worst_delta:+.3f})" if self.worst_dimension else ""
        return f"{self.task_id}: {self.base:.3f} -> {self.new:.3f}{worst}"
