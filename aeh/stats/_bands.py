"""Noise bands for score differences: how far a mean may move before the move is real, and the
one-sided rank test a task's band check carries when many of them are read at once."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from ._dist import norm_sf

__all__ = ["BAND_FLOOR", "BAND_SIGMAS", "ScoreSummary", "band_drop_p", "drop_p_values", "noise_band",
           "summarize_scores"]

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


def band_drop_p(a: ScoreSummary, b: ScoreSummary) -> float:
    """One-sided p-value that b's mean is below a's, on the scale the band is drawn on: the normal
    tail of the drop over σ of the difference of means (the band is 2σ, so clearing it alone is
    p < 0.023). With no spread on either side there is nothing to weigh the drop against: 0 when
    the mean fell (the floor and the threshold decide, as with one attempt), 1 when it did not."""
    if a.n == 0 or b.n == 0 or math.isnan(a.mean) or math.isnan(b.mean):
        return math.nan
    drop = a.mean - b.mean
    se = math.sqrt(a.sd ** 2 / a.n + b.sd ** 2 / b.n)
    if se == 0:
        return 0.0 if drop > 0 else 1.0
    return norm_sf(drop / se)


def drop_p_values(a: Sequence[Sequence[float]], b: Sequence[Sequence[float]]) -> list[float]:
    """One-sided p-value, for each pair of samples, that the scores in b are lower than in a:
    the Mann–Whitney rank test (``scipy.stats.mannwhitneyu``, tie-corrected normal
    approximation), one vectorised call per sample size. A rank test, because attempt scores
    are bounded and bimodal (mostly 1.0, now and then far lower): a t-test reads five bad
    attempts with a small spread as near-certain evidence. nan with fewer than 2 scores on a
    side; 1.0 when every score on both sides is tied (nothing moved)."""
    if len(a) != len(b):
        raise ValueError("a and b must pair up")
    from scipy import stats  # heavy: loaded on first use

    out = [math.nan] * len(a)
    groups: dict[tuple[int, int], list[int]] = {}
    for i, (x, y) in enumerate(zip(a, b, strict=True)):
        if len(x) >= 2 and len(y) >= 2:
            groups.setdefault((len(x), len(y)), []).append(i)
    for idx in groups.values():
        xs = np.array([a[i] for i in idx], dtype=float)
        ys = np.array([b[i] for i in idx], dtype=float)
        with np.errstate(all="ignore"):
            p = stats.mannwhitneyu(xs, ys, alternative="greater", axis=1, method="asymptotic").pvalue
        for i, v in zip(idx, np.atleast_1d(p), strict=True):
            out[i] = 1.0 if math.isnan(v) else float(v)
    return out
