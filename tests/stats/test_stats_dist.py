"""The scipy.special-based distribution functions and Wilson interval equal scipy.stats and
statsmodels bit for bit, and importing aeh.stats loads neither library."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from aeh.stats import wilson_confint, wilson_interval
from aeh.stats._dist import norm_isf, norm_ppf, norm_sf, t_ppf


@pytest.mark.parametrize("q", [1e-9, 0.0005, 0.005, 0.025, 0.05, 0.1, 0.5, 0.9, 0.975, 0.999])
def test_normal_quantiles_and_tails_match_scipy_stats(q: float) -> None:
    assert norm_ppf(q) == stats.norm.ppf(q)
    assert norm_isf(q) == stats.norm.isf(q)
    assert norm_sf(q * 8 - 4) == stats.norm.sf(q * 8 - 4)
    for df in (1, 2, 4, 31, 999):
        assert t_ppf(q, df=df) == stats.t.ppf(q, df=df)


def test_wilson_matches_statsmodels_exactly_for_every_count_up_to_40() -> None:
    for n in range(1, 41):
        for k in range(n + 1):
            for alpha in (0.05, 0.01, 0.2):
                expected = proportion_confint(k, n, alpha=alpha, method="wilson")
                assert wilson_confint(k, n, alpha=alpha) == expected
                assert wilson_interval(k, n, alpha=alpha) == expected


def test_wilson_arrays_and_fractional_n_match_statsmodels() -> None:
    k = np.array([0, 3, 5, 7, 2.5])
    n = np.array([5, 5, 5, 9.5, 3.25])
    low, high = wilson_confint(k, n, alpha=0.05)
    exp_low, exp_high = proportion_confint(k, n, alpha=0.05, method="wilson")
    assert np.array_equal(low, exp_low) and np.array_equal(high, exp_high)


def test_only_wilson_is_offered() -> None:
    with pytest.raises(ValueError, match="only the Wilson interval"):
        wilson_confint(1, 2, method="beta")


def test_importing_the_stats_and_analysis_packages_loads_neither_scipy_stats_nor_statsmodels() -> None:
    code = ("import sys, aeh.stats, aeh.analysis; "
            "print(sorted(m for m in ('scipy.stats', 'statsmodels') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_kept_quantiles_are_what_scipy_special_computes_now() -> None:
    """aeh/stats/_dist_table.py holds, bit for bit, the values scipy.special gives for a report's
    95% intervals (a scipy that computes otherwise fails here: rerun scripts/dist_table.py)."""
    from scipy import special

    from aeh.stats import _dist_table as kept

    assert kept.Q == 1 - 0.05 / 2 and len(kept.T_PPF) >= 300
    for df, t in kept.T_PPF.items():
        assert t == special.stdtrit(df, kept.Q) == stats.t.ppf(kept.Q, df=df) == t_ppf(kept.Q, df)
        assert kept.NORM_SF[t] == special.ndtr(-t) == stats.norm.sf(t) == norm_sf(t)
        assert kept.NORM_PPF[kept.NORM_SF[t]] == stats.norm.ppf(kept.NORM_SF[t])
    for q in (0.025, 0.975):
        assert kept.NORM_PPF[q] == special.ndtri(q) == norm_ppf(q)
    # arguments outside the table are computed
    assert t_ppf(kept.Q, df=301) == stats.t.ppf(kept.Q, df=301) and t_ppf(0.9, df=3) == stats.t.ppf(0.9, df=3)
    assert t_ppf(kept.Q, df=4.5) == stats.t.ppf(kept.Q, df=4.5)


def test_a_suite_rate_and_wilson_interval_at_95_percent_import_no_scipy() -> None:
    code = ("import sys; from aeh.stats import suite_rate, wilson_interval; "
            "s = suite_rate([0.2, 0.5, 0.9, 1.0]); w = wilson_interval(3, 7); "
            "print(s.low, s.high, w, 'scipy.special' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out[-1] == "False"
    from aeh.stats import suite_rate

    s = suite_rate([0.2, 0.5, 0.9, 1.0])
    assert [float(out[0]), float(out[1])] == [s.low, s.high]
