"""One figure in a table or a line of output: formatted, or "—" when there is no value."""

from __future__ import annotations

import math
import sys

__all__ = ["MISSING", "figure"]

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
