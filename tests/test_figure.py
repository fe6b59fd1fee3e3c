"""The one formatter of a figure that may be missing."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from aeh._util.figure import MISSING, figure


@pytest.mark.parametrize("value", [None, math.nan, np.float64("nan"), pd.NA])
def test_a_missing_value_prints_as_the_dash(value: object) -> None:
    assert figure(value, "{:.3f}") == MISSING == "—"


def test_a_value_goes_through_the_given_format() -> None:
    assert figure(0.12345, "{:+.3f}") == "+0.123"


def test_the_default_format_is_two_decimals() -> None:
    assert figure(2 / 3) == "0.67"


def test_zero_is_a_value_not_missing() -> None:
    assert figure(0, "${:.4f}") == "$0.0000"
