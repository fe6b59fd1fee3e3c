from decimal import Decimal

import pytest
from money import add_vat, format_money, round_money, split, to_decimal


def test_to_decimal_accepts_thousands_commas():
    assert to_decimal(" 1,234.50 ") == Decimal("1234.50")
    with pytest.raises(ValueError):
        to_decimal("12,3x")


def test_round_money_common_cases():
    assert round_money("2.344") == Decimal("2.34")
    assert round_money("2.346") == Decimal("2.35")
    assert round_money(7) == Decimal("7.00")


def test_add_vat():
    assert add_vat("100", 19) == Decimal("119.00")
    assert add_vat("19.99", 19) == Decimal("23.79")


def test_split_even_amount():
    assert split("100", 4) == [Decimal("25.00")] * 4
    assert split("90.00", 3) == [Decimal("30.00")] * 3


def test_format_money():
    assert format_money("1234.5") == "€1,234.50"
    assert format_money(Decimal("0.1"), symbol="$") == "$0.10"
