"""One figure in a table or a line of output: formatted, or "—" when there is no value."""

from __future__ import annotations

import math
import sys

__all__ = ["MISSING", "UNPRICED", "figure", "money"]

#: What a figure with no value prints as: None, NaN, or pandas' NA.
MISSING = "—"


def _is_pandas_na(value: object) -> bool:
    # pandas is heavy and may not be loaded; when it is not, no value can be its NA.
    pandas = sys.modules.get("pandas")
    return pandas is not None and value is pandas.NA


def figure(value: object, fmt: str = "{:.2f}") -> str:
    """`value` through `fmt` (a `str.format` pattern), or `MISSING` for None, NaN or pandas' NA."""
    if value is None or (isinstance(value, float) and math.isnan(value)) or _is_pandas_na(value):
        return MISSING
    return fmt.format(value)


#: How an amount is written in each currency a run can keep (`--currency`).
_SYMBOLS = {"USD": "$", "EUR": "€"}
#: What an attempt or a run without a price prints as where "no value" would mislead.
UNPRICED = "unpriced"


def money(value: object, currency: object = "USD", *, none: str = MISSING) -> str:
    """An amount as every view of aeh writes it: two decimals from 1 up (`$12.35`, `$1,204.50`),
    else four decimals or two significant digits, whichever shows more (`$0.0058`, `$0.00026`).

    `none` is what None prints as (`UNPRICED` where None means no price); NaN and pandas' NA are a
    missing figure (`MISSING`). A currency without a symbol is written after the number."""
    if value is None:
        return none
    if figure(value) == MISSING:
        return MISSING
    amount = float(value)  # type: ignore[arg-type]  # a number by now: figure() formatted it
    size = abs(amount)
    decimals = 2 if size >= 1 else 4 if size == 0 else max(4, 1 - math.floor(math.log10(size)))
    digits = f"{size:,.{decimals}f}"
    sign = "-" if amount < 0 and float(digits.replace(",", "")) else ""
    symbol = _SYMBOLS.get(str(currency))
    return f"{sign}{symbol}{digits}" if symbol else f"{sign}{digits} {currency}"
