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
