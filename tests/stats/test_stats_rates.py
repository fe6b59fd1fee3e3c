import itertools
import math

import numpy as np
import pytest
from statsmodels.stats.proportion import proportion_confint

from aeh.stats import (
    SUITE_RATE_METHOD,
    pass_at_k,
    pass_hat_k,
    pass_k_table,
    rate,
    suite_rate,
    wilson_interval,
)


@pytest.mark.parametrize(
    "k,n,expected",
    [
        (5, 5, (0.5655, 1.0)),
        (0, 5, (0.0, 0.4345)),
        (3, 5, (0.2307, 0.8824)),
        (50, 100, (0.4038, 0.5962)),
    ],
)
def test_wilson_known_values(k, n, expected):
    low, high = wilson_interval(k, n)
    assert round(low, 4) == expected[0]
    assert round(high, 4) == expected[1]
    assert (low, high) == pytest.approx(proportion_confint(k, n, method="wilson"))


def test_wilson_matches_closed_form():
    # center = (k + z^2/2)/(n + z^2); half = z/(n+z^2) * sqrt(k(n-k)/n + z^2/4)
    z = 1.959963984540054
    k, n = 3, 5
    center = (k + z * z / 2) / (n + z * z)
    half = z / (n + z * z) * math.sqrt(k * (n - k) / n + z * z / 4)
    assert wilson_interval(k, n) == pytest.approx((center - half, center + half))


def test_wilson_n_zero_and_bad_counts():
    low, high = wilson_interval(0, 0)
    assert math.isnan(low) and math.isnan(high)
    with pytest.raises(ValueError):
        wilson_interval(6, 5)


def test_rate_dataclass():
    r = rate(3, 5)
    assert (r.successes, r.n, r.rate) == (3, 5, 0.6)
    assert (round(r.low, 4), round(r.high, 4)) == (0.2307, 0.8824)
    assert math.isnan(rate(0, 0).rate)


def test_pass_k_hand_values():
    # n=4 attempts, c=2 successes
    assert pass_hat_k(4, 2, 1) == pytest.approx(0.5)
    assert pass_hat_k(4, 2, 2) == pytest.approx(1 / 6)  # C(2,2)/C(4,2)
    assert pass_hat_k(4, 2, 3) == 0.0  # C(2,3) = 0
    assert pass_at_k(4, 2, 1) == pytest.approx(0.5)
    assert pass_at_k(4, 2, 2) == pytest.approx(5 / 6)  # 1 - C(2,2)/C(4,2)
    assert pass_at_k(4, 2, 3) == 1.0  # 1 - C(2,3)/C(4,3)
    assert pass_at_k(10, 3, 4) == pytest.approx(1 - 35 / 210)  # 1 - C(7,4)/C(10,4)


@pytest.mark.parametrize("k", [0, -1, 5])
def test_pass_k_bad_k(k):
    with pytest.raises(ValueError):
        pass_hat_k(4, 2, k)
    with pytest.raises(ValueError):
        pass_at_k(4, 2, k)


def test_pass_k_table():
    per_task = {"a": (4, 2), "b": (2, 2)}
    rows = pass_k_table(per_task)
    assert [r["k"] for r in rows] == [1, 2]  # default kmax = smallest n
    assert rows[0]["pass_hat_k"] == pytest.approx(0.75)
    assert rows[1]["pass_hat_k"] == pytest.approx((1 / 6 + 1) / 2)
    assert rows[1]["pass_at_k"] == pytest.approx((5 / 6 + 1) / 2)
    assert all(r["tasks"] == 2 for r in rows)
    rows = pass_k_table(per_task, kmax=4)
    assert [r["tasks"] for r in rows] == [1, 1, 1, 1]  # task b (n=2) excluded from every row
    assert rows[0]["pass_hat_k"] == 0.5 and rows[2]["pass_hat_k"] == 0.0 and rows[2]["pass_at_k"] == 1.0
    with pytest.raises(ValueError):
        pass_k_table(per_task, kmax=5)


def test_pass_k_table_is_monotone_in_k_for_random_counts():
    """Property: over random uneven counts and any kmax, pass^k never rises, pass@k never falls."""
    rng = np.random.default_rng(5)
    for _ in range(500):
        ns = rng.integers(1, 11, size=rng.integers(1, 9))
        per_task = {f"t{i}": (int(n), int(rng.integers(0, n + 1))) for i, n in enumerate(ns)}
        for kmax in range(1, int(ns.max()) + 1):
            rows = pass_k_table(per_task, kmax=kmax)
            hat = [r["pass_hat_k"] for r in rows]
            at = [r["pass_at_k"] for r in rows]
            assert all(b <= a + 1e-12 for a, b in itertools.pairwise(hat)), per_task
            assert all(b >= a - 1e-12 for a, b in itertools.pairwise(at)), per_task
            assert len({r["tasks"] for r in rows}) == 1


def _wilson(p: float, n: float, z: float) -> tuple[float, float]:
    """Wilson's closed form, written out: the check on statsmodels' call."""
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


def test_suite_rate_hand_example():
    # mean 0.5; sd(ddof=1) = sqrt(0.2/3) = 0.2582; se = 0.1291; t_{3,.975} = 3.1824;
    # effective tasks 0.25 / se² = 15; Wilson for 0.5 at n = 15 with z = 3.1824
    s = suite_rate([0.2, 0.4, 0.6, 0.8])
    assert s.mean == pytest.approx(0.5)
    assert s.se == pytest.approx(0.129099, abs=1e-6)
    low, high = _wilson(0.5, 15.0, 3.182446)
    assert (s.low, s.high) == (pytest.approx(low, abs=1e-5), pytest.approx(high, abs=1e-5))
    assert s.low == pytest.approx(0.1826, abs=1e-4)
    assert s.n_tasks == 4
    assert s.method == SUITE_RATE_METHOD and "Miller" in s.method and "Wilson" in s.method


def test_suite_rate_stays_inside_0_1_and_small():
    s = suite_rate([1.0, 1.0, 0.8])
    # mean .9333, se = .066667, n_eff = .9333 * .0667 / .0044 = 14, t_{2} = 4.3027: the upper
    # bound stays below 1 without clipping, the lower bends toward the middle
    low, high = _wilson(0.933333, 0.933333 * 0.066667 / 0.066667 ** 2, 4.302653)
    assert s.high == pytest.approx(high, abs=1e-4) and s.high < 1.0
    assert s.low == pytest.approx(low, abs=1e-4)
    one = suite_rate([0.6])
    assert one.mean == 0.6 and math.isnan(one.se) and math.isnan(one.low)
    assert suite_rate([]).n_tasks == 0


def test_suite_interval_wider_than_pooled_wilson_when_tasks_differ():
    # 4 tasks x 10 attempts: two always pass, two never. Pooled Wilson 20/40 is narrow;
    # tasks-as-clusters interval reflects that task identity drives the outcome.
    s = suite_rate([1.0, 1.0, 0.0, 0.0])
    low, high = wilson_interval(20, 40)
    assert (s.high - s.low) > 2 * (high - low)


def test_suite_interval_does_not_collapse_when_every_task_scores_the_same() -> None:
    from statsmodels.stats.proportion import proportion_confint

    from aeh.stats import SUITE_RATE_DEGENERATE_METHOD

    zero = suite_rate([0.0] * 5)
    assert (zero.mean, zero.se, zero.low) == (0.0, 0.0, 0.0)
    assert zero.high == pytest.approx(proportion_confint(0, 5, method="wilson")[1])  # 0.4345
    assert zero.high > 0.4 and zero.method == SUITE_RATE_DEGENERATE_METHOD
    full = suite_rate([1.0] * 5)
    assert full.low == pytest.approx(0.5655, abs=1e-4) and full.high == 1.0
    mixed = suite_rate([0.5] * 4)
    assert mixed.low < 0.5 < mixed.high


def test_wilson_coverage_is_nominal_on_average_with_dips_as_documented():
    """docs/statistics.md: mean exact coverage ≈ 0.954 for n = 5..20, minimum 0.89–0.93 on [0.1, 0.9]."""
    from scipy.stats import binom

    ps = np.round(np.arange(0.1, 0.9001, 0.001), 3)
    minima = []
    for n in range(5, 21):
        k = np.arange(n + 1)
        low, high = proportion_confint(k, n, method="wilson")
        inside = (low[None, :] <= ps[:, None]) & (ps[:, None] <= high[None, :])
        cover = (binom.pmf(k[None, :], n, ps[:, None]) * inside).sum(axis=1)
        assert 0.950 < cover.mean() < 0.960
        minima.append(cover.min())
    assert 0.89 < min(minima) < 0.895 and all(0.905 < m < 0.93 for m in minima[3:])


def test_suite_rate_caps_the_effective_sample_size():
    rates = [0.1, 0.0, 0.0, 0.0, 0.0]
    loose, capped = suite_rate(rates), suite_rate(rates, max_n=5.0)
    assert capped.mean == loose.mean and capped.high > 2 * loose.high
    assert suite_rate(rates, max_n=1e9) == loose  # a cap that does not bind changes nothing
