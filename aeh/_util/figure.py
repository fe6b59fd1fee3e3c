"""One figure in a table or a line of output: formatted, or "—" when there is no value."""

from __future__ import annotations

import math
import sys

__all__ = ["MISSING", "figure", "money"]

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


def money(value: object, currency: object = "USD") -> str:
    """An amount with its currency's symbol and four decimals (`MISSING` without a value); a
    currency without a symbol is written after the number."""
    symbol = _SYMBOLS.get(str(currency))
    return figure(value, symbol + "{:.4f}" if symbol else "{:.4f} " + str(currency))
