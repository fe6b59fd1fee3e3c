"""The few distribution functions every rate needs, from `scipy.special` instead of `scipy.stats`.

`import scipy.stats` costs ~1 s on 2 cores (and statsmodels, which imports it, more); every
report and `aeh.load_run` needs only the normal and t quantiles behind a Wilson interval.
These are the same `scipy.special` calls `scipy.stats.norm` and `scipy.stats.t` make, so the
values are bit-identical; the Wilson interval is statsmodels' `proportion_confint(method="wilson")`
formula, operation for operation (the tests check both against the libraries).

The values a report's 95% intervals need (t at 0.975 for 1..300 degrees of freedom, its normal
tail and the normal quantiles the intervals then use) are looked up in `_dist_table`, written by
scripts/dist_table.py from these same scipy.special calls: a run report does not import
scipy.special (some 0.1 s of CPU). Any other argument is computed.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._dist_table import NORM_PPF, NORM_SF, T_PPF, Q

__all__ = ["norm_isf", "norm_ppf", "norm_sf", "t_ppf", "wilson_confint"]


def norm_ppf(q: float) -> float:
    """`scipy.stats.norm.ppf(q)`."""
    known = NORM_PPF.get(q)
    if known is not None:
        return known
    from scipy import special  # heavy: loaded on first use

    return float(special.ndtri(q))


def norm_isf(q: float) -> float:
    """`scipy.stats.norm.isf(q)`."""
    return -norm_ppf(q)


def norm_sf(x: float) -> float:
    """`scipy.stats.norm.sf(x)`."""
    known = NORM_SF.get(x)
    if known is not None:
        return known
    from scipy import special  # heavy: loaded on first use

    return float(special.ndtr(-x))


def t_ppf(q: float, df: float) -> float:
    """`scipy.stats.t.ppf(q, df)`."""
    known: float | None = T_PPF.get(int(df)) if q == Q and df == int(df) else None
    if known is not None:
        return known
    from scipy import special  # heavy: loaded on first use

    return float(special.stdtrit(df, q))


def wilson_confint(count: Any, nobs: Any, alpha: float = 0.05, method: str = "wilson") -> tuple[Any, Any]:
    """statsmodels' `proportion_confint(count, nobs, alpha, method="wilson")` (two-sided): floats
    for scalars, arrays for arrays."""
    if method != "wilson":
        raise ValueError(f"only the Wilson interval is computed here, not {method!r}")
    scalar = np.isscalar(count) and np.isscalar(nobs)
    count_a, nobs_a = np.asarray(count), np.asarray(nobs)
    q_ = count_a / nobs_a
    crit = norm_isf(alpha / 2.0)
    crit2 = crit**2
    denom = 1 + crit2 / nobs_a
    center = (q_ + crit2 / (2 * nobs_a)) / denom
    dist = crit * np.sqrt(q_ * (1.0 - q_) / nobs_a + crit2 / (4.0 * nobs_a**2))
    dist /= denom
    low, high = np.clip(center - dist, 0, 1), np.clip(center + dist, 0, 1)
    if scalar:
        return float(low), float(high)
    return low, high
