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

__all__ = ["SUITE_FAMILY_ALPHA", "NewlyFailing", "family_q", "suite_family_q"]

#: The suite's own checks (each dimension and overall, seven on the built-in scorers) are one
#: family under Holm at this level. Each check still needs its threshold and its 2σ band; the
#: family control only keeps seven of them from adding up to a false alarm in one pair in
#: fifteen for a noisy agent (docs/trajectory.md). Fixed, like the band: not a knob.
SUITE_FAMILY_ALPHA = 0.05


def family_q(pvalues: Sequence[float], alpha: float) -> list[float]:
    """Benjamini–Hochberg q-values over the finite p-values (statsmodels ``multipletests``,
    ``fdr_bh``); a nan p-value (nothing to test) stays nan and is not in the family."""
    tested = [i for i, p in enumerate(pvalues) if not math.isnan(p)]
    q = [math.nan] * len(pvalues)
    if tested:
        from statsmodels.stats.multitest import multipletests  # heavy: loaded on first use

        _, adjusted, _, _ = multipletests([pvalues[i] for i in tested], alpha=alpha, method="fdr_bh")
        for i, value in zip(tested, adjusted, strict=True):
            q[i] = float(value)
    return q


def suite_family_q(pvalues: Sequence[float]) -> list[float]:
    """Holm-adjusted p-values of the suite's checks: family-wise control whatever the dependence
    between dimensions, which share attempts. The same values as statsmodels ``multipletests``
    with ``holm`` (a test checks it), computed here because that branch ends in a full
    ``gc.collect()``, half a second per gate in a process holding a run's frames."""
    tested = [i for i, p in enumerate(pvalues) if not math.isnan(p)]
    q = [math.nan] * len(pvalues)
    order = sorted(tested, key=lambda i: pvalues[i])
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(order) - rank) * pvalues[i]))
        q[i] = running
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
