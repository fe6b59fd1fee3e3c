import math
import warnings

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from aeh.stats import TaskCounts, compare_tasks, paired_suite_difference, two_sample_test


def test_boschloo_equals_scipy_with_samples_as_columns():
    # scipy's boschloo_exact treats each COLUMN as one binomial sample.
    p = two_sample_test(3, 5, 1, 5)
    assert p == pytest.approx(stats.boschloo_exact([[3, 1], [2, 4]]).pvalue)
    assert p == pytest.approx(0.34375)
    # 5/5 vs 0/5: one-sided sup_pi pi^5 (1-pi)^5 = (1/4)^5, doubled -> 2/1024
    assert two_sample_test(5, 5, 0, 5) == pytest.approx(2 / 1024)
    assert two_sample_test(10, 10, 2, 10) == pytest.approx(
        stats.boschloo_exact([[10, 2], [0, 8]]).pvalue
    )


def test_degenerate_tables_no_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert two_sample_test(5, 5, 5, 5) == 1.0
        assert two_sample_test(0, 5, 0, 5) == 1.0
        assert two_sample_test(0, 5, 0, 10) == 1.0
        assert math.isnan(two_sample_test(0, 0, 3, 5))
        assert math.isnan(two_sample_test(3, 5, 0, 0))
        assert two_sample_test(2, 5, 2, 5) == pytest.approx(1.0)


@pytest.mark.slow  # exhaustive: ~400 Boschloo tests over every table, n = 5..10
def test_boschloo_region_contains_fisher_region_small_n():
    # Boschloo is uniformly more powerful than Fisher: every table Fisher rejects at 0.05,
    # Boschloo rejects too (checked n = 5..10), and strictly more at n = 10.
    extra = 0
    for n in range(5, 11):
        for ka in range(n + 1):
            for kb in range(n + 1):
                f = stats.fisher_exact([[ka, kb], [n - ka, n - kb]]).pvalue
                b = two_sample_test(ka, n, kb, n)
                if f < 0.05:
                    assert b < 0.05, (n, ka, kb)
                extra += (b < 0.05) and not (f < 0.05)
    assert extra > 0


def test_bad_counts():
    with pytest.raises(ValueError):
        two_sample_test(6, 5, 1, 5)


def test_compare_tasks_bh_and_flags():
    rows = [
        TaskCounts("drop", 10, 10, 1, 10),
        TaskCounts("rise", 0, 10, 9, 10),
        TaskCounts("same", 5, 10, 5, 10),
        TaskCounts("small", 4, 5, 3, 5),
        TaskCounts("missing", 3, 5, 0, 0),
    ]
    out = compare_tasks(rows)
    by = {c.task_id: c for c in out}
    tested = ["drop", "rise", "same", "small"]
    p = [two_sample_test(r.k_a, r.n_a, r.k_b, r.n_b) for r in rows[:4]]
    _, q, _, _ = multipletests(p, method="fdr_bh")
    for tid, qi, pi in zip(tested, q, p, strict=False):
        assert by[tid].p == pytest.approx(pi)
        assert by[tid].q == pytest.approx(qi)
    assert by["drop"].regressed and not by["drop"].improved
    assert by["drop"].delta == pytest.approx(-0.9)
    assert by["rise"].improved and not by["rise"].regressed
    assert not by["same"].regressed and not by["small"].regressed
    m = by["missing"]
    assert math.isnan(m.p) and math.isnan(m.q) and not m.regressed
    assert "excluded" in m.note
    assert by["drop"].rate_a == 1.0 and by["drop"].rate_b == pytest.approx(0.1)


def test_compare_tasks_accepts_plain_tuples():
    out = compare_tasks([("t", 5, 5, 0, 5)])
    assert out[0].q == pytest.approx(2 / 1024) and out[0].regressed


def test_paired_suite_difference_hand_example():
    a = [0.2, 0.4, 0.6, 0.8]
    b = [0.0, 0.4, 0.4, 0.6]
    # diffs -0.2, 0, -0.2, -0.2: mean -0.15, sd 0.1, se 0.05, t = -3 on 3 df
    d = paired_suite_difference(a, b)
    assert d.mean_delta == pytest.approx(-0.15)
    assert d.se == pytest.approx(0.05)
    assert d.p == pytest.approx(2 * stats.t.sf(3, 3))
    assert d.p == pytest.approx(stats.ttest_rel(b, a).pvalue)
    assert d.low == pytest.approx(-0.15 - stats.t.ppf(0.975, 3) * 0.05)
    assert d.high < 0.02 and d.n_tasks == 4 and "ttest_rel" in d.method


def test_paired_suite_difference_edge_cases():
    same = paired_suite_difference([0.5, 0.7], [0.5, 0.7])
    assert same.mean_delta == 0.0 and same.p == 1.0
    one = paired_suite_difference([0.5], [0.7])
    assert one.mean_delta == pytest.approx(0.2) and math.isnan(one.se)
    with pytest.raises(ValueError):
        paired_suite_difference([0.1, 0.2], [0.1])


def test_p_value_cache_hits():
    from aeh.stats._compare import _boschloo_p

    two_sample_test(7, 9, 2, 9)
    before = _boschloo_p.cache_info().hits
    assert two_sample_test(7, 9, 2, 9) == pytest.approx(
        stats.boschloo_exact(np.array([[7, 2], [2, 7]])).pvalue
    )
    assert _boschloo_p.cache_info().hits == before + 1


def test_paired_difference_does_not_claim_certainty_when_all_tasks_move_alike() -> None:
    from aeh.stats import PAIRED_DIFF_WITHIN_METHOD

    # Three tasks, each 5/5 → 4/5: the spread across tasks is 0, yet this is hardly certain.
    diff = paired_suite_difference([1.0] * 3, [0.8] * 3, counts=[(5, 5, 4, 5)] * 3)
    assert diff.mean_delta == pytest.approx(-0.2)
    assert diff.method == PAIRED_DIFF_WITHIN_METHOD
    assert diff.se > 0 and diff.low < -0.2 < diff.high and diff.p > 0.05
    # Hand check: Agresti-Caffo p̃_a = 6/7, p̃_b = 5/7; var per task = p(1-p)/7 for each side.
    pa, pb = 6 / 7, 5 / 7
    assert diff.se == pytest.approx(math.sqrt(3 * (pa * (1 - pa) / 7 + pb * (1 - pb) / 7)) / 3)
    no_counts = paired_suite_difference([1.0] * 3, [0.8] * 3)
    assert math.isnan(no_counts.low) and math.isnan(no_counts.p)
    assert paired_suite_difference([0.5, 0.7], [0.5, 0.7]).p == 1.0


def test_task_difference_interval_is_statsmodels_newcombe():
    from statsmodels.stats.proportion import confint_proportions_2indep

    from aeh.stats import task_difference_interval, wilson_interval

    low, high = task_difference_interval(5, 5, 3, 5)  # B - A = -0.4
    assert (low, high) == pytest.approx(confint_proportions_2indep(3, 5, 5, 5, method="newcomb"))
    # Newcombe's method 10 from the two Wilson intervals, by hand
    la, ha = wilson_interval(5, 5)
    lb, hb = wilson_interval(3, 5)
    assert low == pytest.approx(-0.4 - math.sqrt((0.6 - lb) ** 2 + (ha - 1.0) ** 2))
    assert high == pytest.approx(-0.4 + math.sqrt((hb - 0.6) ** 2 + (1.0 - la) ** 2))
    assert all(math.isnan(v) for v in task_difference_interval(0, 0, 3, 5))
    c = compare_tasks([TaskCounts("t", 5, 5, 3, 5)])[0]
    assert (c.delta_low, c.delta_high) == pytest.approx((low, high))
