import math

import numpy as np
import pytest
from statsmodels.stats import inter_rater

from aeh.stats import cohens_kappa


def _labels(table):
    """Expand [[TT, TF], [FT, FF]] (rows programmatic, cols judge) into label lists."""
    prog, judge = [], []
    for p, j, count in [(True, True, table[0][0]), (True, False, table[0][1]),
                        (False, True, table[1][0]), (False, False, table[1][1])]:
        prog += [p] * count
        judge += [j] * count
    return prog, judge


def test_kappa_hand_checked():
    # table rows = programmatic pass/fail, cols = judge pass/fail; n = 40
    # po = (20 + 12)/40 = 0.8
    # base rates: programmatic 25/40 = 0.625, judge 23/40 = 0.575
    # pe = 0.625*0.575 + 0.375*0.425 = 0.359375 + 0.159375 = 0.51875
    # kappa = (0.8 - 0.51875)/(1 - 0.51875) = 0.28125/0.48125 = 0.584416
    a = cohens_kappa(*_labels([[20, 5], [3, 12]]))
    assert a.table == [[20, 5], [3, 12]]
    assert a.n == 40
    assert a.raw_agreement == pytest.approx(0.8)
    assert a.base_rate_programmatic == pytest.approx(0.625)
    assert a.base_rate_judge == pytest.approx(0.575)
    assert a.kappa == pytest.approx(0.28125 / 0.48125)
    ref = inter_rater.cohens_kappa(np.array([[20, 5], [3, 12]]))
    assert a.kappa_low == pytest.approx(ref.kappa_low)
    assert a.kappa_high == pytest.approx(ref.kappa_upp)
    assert a.trusted is False  # 0.58 < 0.7


def test_table_orientation():
    a = cohens_kappa([True, True, False, False], [True, False, True, True])
    # (T,T)=1, (T,F)=1, (F,T)=2, (F,F)=0
    assert a.table == [[1, 1], [2, 0]]


def test_trusted_and_alpha():
    a = cohens_kappa(*_labels([[18, 1], [1, 20]]))
    # po = 38/40 = .95; pe = .475*.475 + .525*.525 = .50125; kappa = .44875/.49875
    assert a.kappa == pytest.approx(0.44875 / 0.49875)
    assert a.trusted is True
    wide = cohens_kappa(*_labels([[18, 1], [1, 20]]), alpha=0.01)
    assert wide.kappa_low < a.kappa_low and wide.kappa_high > a.kappa_high


def test_degenerate_all_one_label():
    a = cohens_kappa([True] * 6, [True] * 6)
    assert math.isnan(a.kappa) and a.trusted is False and "undefined" in a.note
    assert a.raw_agreement == 1.0


def test_one_constant_grader_gives_zero_kappa():
    a = cohens_kappa([True] * 6, [True, True, True, False, True, False])
    assert a.kappa == pytest.approx(0.0) and not a.trusted
    assert math.isnan(a.kappa_low) and a.note


def test_length_mismatch():
    with pytest.raises(ValueError):
        cohens_kappa([True], [True, False])


def test_opposite_single_labels_are_kappa_zero_not_undefined():
    """Every attempt failed by the graders and passed by the judge (a 135M judge does this):
    chance agreement is 0·1 + 1·0 = 0, observed 0, so κ = 0 — not "chance agreement = 1"."""
    a = cohens_kappa([False] * 12, [True] * 12)
    assert a.kappa == 0.0 and a.raw_agreement == 0.0 and not a.trusted
    assert math.isnan(a.kappa_low) and math.isnan(a.kappa_high)
    assert "opposite single labels" in a.note and "chance agreement = 1" not in a.note
    same = cohens_kappa([False] * 12, [False] * 12)
    assert math.isnan(same.kappa) and "same one label" in same.note
