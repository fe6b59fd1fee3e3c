import math

import numpy as np
import pytest
from scipy import stats

from aeh.stats import (
    attempts_for_power,
    minimum_detectable_drop,
    power_of_comparison,
    rejection_region,
    two_sample_test,
)


@pytest.mark.slow  # brute force over every table, n = 1..10
@pytest.mark.parametrize("alpha", [0.05, 0.05 / 32])
def test_rejection_region_matches_brute_force(alpha):
    for n in range(1, 11):
        brute = np.array(
            [[kb < ka and two_sample_test(ka, n, kb, n) < alpha for kb in range(n + 1)]
             for ka in range(n + 1)]
        )
        assert (rejection_region(n, alpha) == brute).all(), n


def test_power_exact_sum():
    n = 6
    region = rejection_region(n, 0.05)
    pa = stats.binom.pmf(range(n + 1), n, 0.9)
    pb = stats.binom.pmf(range(n + 1), n, 0.3)
    expected = sum(pa[i] * pb[j] for i in range(n + 1) for j in range(n + 1) if region[i, j])
    assert power_of_comparison(0.9, 0.3, n) == pytest.approx(expected)
    # n=2: smallest Boschloo p is 2*(1/4)^2 = 0.125 > 0.05, so nothing can be flagged
    assert power_of_comparison(0.9, 0.0, 2) == 0.0
    # no drop -> tiny probability of flagging a regression
    assert power_of_comparison(0.5, 0.5, 10) < 0.025


def test_attempts_for_power_is_smallest_n():
    n = attempts_for_power(0.9, 0.7)  # 0.9 -> 0.2
    assert n == 8
    assert power_of_comparison(0.9, 0.2, n) >= 0.8
    assert power_of_comparison(0.9, 0.2, n - 1) < 0.8
    assert all(power_of_comparison(0.9, 0.2, m) < 0.8 for m in range(1, n))


def test_attempts_for_power_multiplicity_and_sequence():
    single = attempts_for_power(0.9, 0.7)
    many = attempts_for_power(0.9, 0.7, n_tasks=32)
    assert many > single
    assert power_of_comparison(0.9, 0.2, many, n_tasks=32) >= 0.8
    seq = attempts_for_power([0.9, 0.75], 0.7)
    assert seq == max(attempts_for_power(0.9, 0.7), attempts_for_power(0.75, 0.7))


def test_attempts_for_power_errors():
    with pytest.raises(ValueError):
        attempts_for_power(0.9, 0.3, max_n=5)
    with pytest.raises(ValueError):
        attempts_for_power(0.5, 0.6)


def test_minimum_detectable_drop():
    d = minimum_detectable_drop(0.9, 10)
    assert power_of_comparison(0.9, 0.9 - d, 10) >= 0.8
    assert power_of_comparison(0.9, 0.9 - d + 0.01, 10) < 0.8
    assert d == pytest.approx(0.59)
    # n=5 with 32 tasks: smallest Boschloo p (2/1024) > 0.05/32, so no drop is detectable
    assert math.isnan(minimum_detectable_drop(0.9, 5, n_tasks=32))
