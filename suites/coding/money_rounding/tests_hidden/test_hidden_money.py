from decimal import Decimal

from money import add_vat, format_money, round_money, split


def test_halves_round_away_from_zero():
    assert round_money("0.125") == Decimal("0.13")
    assert round_money("0.135") == Decimal("0.14")
    assert round_money("-0.125") == Decimal("-0.13")


def test_halves_not_representable_in_binary():
    assert round_money("2.675") == Decimal("2.68")
    assert round_money("1.005") == Decimal("1.01")
    assert round_money("-2.675") == Decimal("-2.68")


def test_large_amount_keeps_exact_cents():
    assert round_money("12345678901234.565") == Decimal("12345678901234.57")


def test_vat_landing_on_half_cent():
    assert add_vat("2.50", 7) == Decimal("2.68")


def test_split_uneven_amount_sums_to_total():
    assert split("100", 3) == [Decimal("33.34"), Decimal("33.33"), Decimal("33.33")]
    assert split("0.05", 3) == [Decimal("0.02"), Decimal("0.02"), Decimal("0.01")]
    for total in ("10.00", "0.01", "99.99", "1234.56"):
        for parts in (1, 2, 3, 7):
            shares = split(total, parts)
            assert sum(shares) == Decimal(total)
            assert max(shares) - min(shares) <= Decimal("0.01")


def test_split_negative_amount():
    assert split("-10", 3) == [Decimal("-3.34"), Decimal("-3.33"), Decimal("-3.33")]


def test_format_negative_and_negative_zero():
    assert format_money("-5") == "-€5.00"
    assert format_money("-1234.567") == "-€1,234.57"
    assert format_money("-0.001") == "€0.00"
