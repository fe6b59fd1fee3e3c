"""Noise bands for score differences: how far a mean may move before the move is real."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import NamedTuple

__all__ = ["BAND_FLOOR", "BAND_SIGMAS", "ScoreSummary", "noise_band", "summarize_scores"]

#: Both fixed on purpose: a gate whose tolerance can be quietly widened is no gate.
BAND_SIGMAS = 2.0
BAND_FLOOR = 0.01


class ScoreSummary(NamedTuple):
    mean: float
    sd: float
    n: int


def summarize_scores(values: Sequence[float]) -> ScoreSummary:
    """Mean, sample standard deviation (0 for fewer than two values) and count."""
    n = len(values)
    if n == 0:
        return ScoreSummary(math.nan, math.nan, 0)
    return ScoreSummary(statistics.fmean(values), statistics.stdev(values) if n > 1 else 0.0, n)


def noise_band(a: ScoreSummary, b: ScoreSummary) -> float:
    """2σ of the difference of two means (independent samples), never below 0.01."""
    if a.n == 0 or b.n == 0:
        return math.inf
    se = math.sqrt(a.sd ** 2 / a.n + b.sd ** 2 / b.n)
    return max(BAND_FLOOR, BAND_SIGMAS * se)
