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


def test_money_has_one_rule_for_every_view() -> None:
    from aeh._util.figure import UNPRICED, money
    from aeh.report import money as report_money

    # two decimals from 1 up; below, four decimals or two significant digits, whichever shows more
    assert [money(v) for v in (1234.5, 12.345, 0.5123, 0.0058, 0.00025785, 0.00005, 0)] == [
        "$1,234.50", "$12.35", "$0.5123", "$0.0058", "$0.00026", "$0.000050", "$0.0000"]
    assert money(-0.0012) == "-$0.0012" and money(0.0058, "EUR") == "€0.0058" and money(0.5, "GBP") == "0.5000 GBP"
    # None is a missing figure unless the caller says it means no price; NaN is always missing
    assert money(None) == "—" and money(None, none=UNPRICED) == "unpriced" and money(float("nan")) == "—"
    # the report's and the viewer's money is the same rule, with None as "unpriced"
    assert report_money(0.00025785) == money(0.00025785) and report_money(None) == "unpriced"
