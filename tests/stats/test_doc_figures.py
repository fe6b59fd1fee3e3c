"""Figures docs/statistics.md quotes that the code computes, recomputed: the doc cannot go stale."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import binom
from statsmodels.stats.proportion import proportion_confint

from aeh.stats import attempts_for_power, minimum_detectable_drop

DOC = (Path(__file__).resolve().parents[2] / "docs" / "statistics.md").read_text()


@pytest.mark.slow  # exact power up to n = 68: ~40 s
def test_attempts_needed_table() -> None:
    rows = re.findall(r"^\| (0\.\d) \(→ (0\.\d)\) \| (\d+) \| (\d+) \|$", DOC, re.M)
    assert len(rows) == 3
    for drop, _, one, many in rows:
        assert attempts_for_power(0.9, float(drop), n_tasks=1) == int(one), drop
        assert attempts_for_power(0.9, float(drop), n_tasks=32) == int(many), drop


@pytest.mark.slow
def test_minimum_detectable_drop_table() -> None:
    rows = re.findall(r"^\| (\d+) \| (0\.\d\d) \| (0\.\d\d|none) \|$", DOC, re.M)
    assert [int(n) for n, _, _ in rows] == [5, 10, 20, 30]
    for n, one, many in rows:
        assert minimum_detectable_drop(0.9, int(n), n_tasks=1) == float(one)
        got = minimum_detectable_drop(0.9, int(n), n_tasks=32)
        assert (math.isnan(got) and many == "none") or got == float(many)


def test_wilson_coverage_near_the_ends() -> None:
    """"near the ends (p < 0.05 or > 0.95) it dips further, to 0.83–0.85 for every n from 5 to 20"."""
    assert "to 0.83–0.85 for every n from 5 to 20" in " ".join(DOC.split())
    ps = np.round(np.concatenate([np.arange(1, 50), np.arange(951, 1000)]) / 1000, 3)
    for n in range(5, 21):
        k = np.arange(n + 1)
        low, high = proportion_confint(k, n, method="wilson")
        inside = (low[None, :] <= ps[:, None]) & (ps[:, None] <= high[None, :])
        cover = (binom.pmf(k[None, :], n, ps[:, None]) * inside).sum(axis=1)
        assert 0.83 <= cover.min() < 0.855, n


RESULTS = (Path(__file__).resolve().parents[2] / "benchmarks" / "RESULTS.md").read_text()


def _section(name: str) -> str:
    return RESULTS.split(f"<!-- {name} -->", 1)[1].split(f"<!-- /{name} -->", 1)[0]


def _shipped_rates(scenario: str) -> dict[int, str]:
    """n → the gate's rate at the shipped level, from the stored gate_calibration table."""
    out = {}
    for line in _section("gate_calibration").splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == 8 and cells[1] == scenario and cells[2].endswith("(shipped)"):
            out[int(cells[3])] = cells[5].split()[0]
    return out


def test_compare_calibration_figures_come_from_the_stored_benchmark() -> None:
    """Each row of statistics.md's gate table equals the shipped-level rows of RESULTS.md."""
    from aeh.stats import SUITE_ALPHA

    assert f"suite {1 - SUITE_ALPHA:.0%})" in DOC
    rows = {
        "A/A, 32 tasks, rates evenly 0.50–0.98: gate fires": "32 tasks, rates 0.50–0.98",
        "A/A, 32 tasks, rates U[0.1, 0.95]: gate fires": "32 tasks, rates U[0.1, 0.95]",
        "A/A, 32 tasks, strong agent (26 at 0.97–1.00): gate fires": "32 tasks, strong agent (26 at 0.97–1.00)",
        "A/A, 5 tasks, rates 0.90–0.99: gate fires": "5 tasks, rates 0.90–0.99",
        "every one of 32 tasks drops 0.15: gate fires": "32 tasks all drop 0.15",
        "3 of 32 tasks drop 0.9 → 0.2: gate fires": "3 of 32 drop 0.9 → 0.2",
        "all 5 tasks drop 0.3: gate fires": "5 tasks all drop 0.3",
    }
    for doc_name, scenario in rows.items():
        stored = _shipped_rates(scenario)
        assert f"| {doc_name} | {stored[5]} | {stored[10]} |" in DOC, (doc_name, stored)
    noisy = _shipped_rates("32 tasks 0.50–0.98, run noise sd 0.03")
    assert f"**{noisy[5]} at n = 5 and {noisy[10]} at n = 10**" in " ".join(DOC.split())


@pytest.mark.slow  # 3,000 simulated suites: ~5 s
def test_suite_interval_covers_a_strong_agent_on_10_tasks() -> None:
    """The plain t-interval covers 0.92 here (docs/statistics.md); the shipped one ≥ 0.94."""
    from aeh.stats import suite_rate

    rng = np.random.default_rng(7)
    draws = 3000
    hits = 0
    for _ in range(draws):
        rates = rng.binomial(10, rng.beta(9, 1, 10)) / 10
        s = suite_rate(rates.tolist())
        hits += s.low <= 0.9 <= s.high
    assert hits / draws >= 0.935


@pytest.mark.slow  # Boschloo's rejection region at n = 10: ~10 s
def test_boschloo_against_fisher_power_figure() -> None:
    """"For a drop from 0.9 to 0.4 at n = 10, the power at α = 0.05 is 0.659 with Boschloo and
    0.474 with Fisher"."""
    from scipy.stats import fisher_exact

    from aeh.stats import power_of_comparison

    fisher = sum(binom.pmf(ka, 10, 0.9) * binom.pmf(kb, 10, 0.4) for ka in range(11) for kb in range(ka)
                 if fisher_exact([[ka, kb], [10 - ka, 10 - kb]]).pvalue <= 0.05)
    figure = f"the power at α = 0.05 is {power_of_comparison(0.9, 0.4, 10):.3f} with Boschloo and {fisher:.3f} with Fisher"
    assert figure in " ".join(DOC.split())
