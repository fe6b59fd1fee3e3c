"""Money helpers for invoices.

Amounts are ``Decimal`` values in euros with two decimal places. Inputs may
be ``Decimal``, ``int`` or strings such as ``"1,234.50"`` (thousands commas
and surrounding spaces are allowed). Rounding to cents is commercial
rounding: halves go away from zero (2.675 -> 2.68, -2.675 -> -2.68), as
required on our invoices, never banker's rounding.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

CENT = Decimal("0.01")


def to_decimal(value: Decimal | int | str) -> Decimal:
    if isinstance(value, Decimal):
        return value
    if isinstance(value, int):
        return Decimal(value)
    if isinstance(value, str):
        cleaned = value.strip().replace(",", "")
        try:
            return Decimal(cleaned)
        except InvalidOperation:
            raise ValueError(f"not an amount: {value!r}") from None
    raise TypeError(f"unsupported amount type: {type(value).__name__}")


def round_money(value: Decimal | int | str) -> Decimal:
    """Round to cents, halves away from zero."""
    # Decimal's ROUND_HALF_UP rounds halves away from zero, in exact decimal.
    return to_decimal(value).quantize(CENT, rounding=ROUND_HALF_UP)


def add_vat(net: Decimal | int | str, rate_percent: Decimal | int | str) -> Decimal:
    """Gross amount for ``net`` plus VAT at ``rate_percent``, rounded to cents."""
    rate = to_decimal(rate_percent)
    return round_money(to_decimal(net) * (1 + rate / 100))


def split(total: Decimal | int | str, parts: int) -> list[Decimal]:
    """Split ``total`` into ``parts`` shares that add up exactly to ``total``
    (after rounding it to cents). Shares differ by at most one cent; the
    larger shares (in absolute value) come first."""
    if parts < 1:
        raise ValueError("parts must be at least 1")
    cents = int(round_money(total) / CENT)
    sign = -1 if cents < 0 else 1
    base, remainder = divmod(abs(cents), parts)
    shares = [base + 1] * remainder + [base] * (parts - remainder)
    return [(sign * share) * CENT for share in shares]


def format_money(value: Decimal | int | str, symbol: str = "€") -> str:
    """``"1234.5"`` -> ``"€1,234.50"``; negatives as ``"-€5.00"``; an amount
    that rounds to zero is shown without a sign."""
    amount = round_money(value)
    sign = "-" if amount < 0 else ""
    return f"{sign}{symbol}{abs(amount):,.2f}"
