"""JSON text for stored payloads, written by orjson where it writes what `json.dumps` would mean.

The store encodes a dozen payloads an attempt (span attributes, tool calls, verdict evidence);
the standard library's encoder spends ~20 µs on a model span's attributes, orjson ~1.5 µs. The
text decodes to the same values. Where orjson would write something else, the standard
encoder writes it as before:

- a float that is NaN or infinite (orjson writes `null`; `json.dumps` keeps `NaN`);
- an int beyond 64 bits, a dict key that is not a string (orjson refuses them).

Dataclasses and datetimes go to `default` as they do for `json.dumps` (their text); an Enum
that is not a str or int is written as its value, where `json.dumps` wrote its text.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

import orjson

__all__ = ["dumps"]

_OPTIONS = orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME


def dumps(obj: Any, default: Callable[[Any], Any] | None = None) -> str:
    """Compact JSON text of `obj` (`separators=(",", ":")`, non-ASCII kept as it is)."""
    try:
        raw = orjson.dumps(obj, default=default, option=_OPTIONS)
    except (orjson.JSONEncodeError, TypeError):
        return _standard(obj, default)
    if b"null" in raw and _has_non_finite(obj):  # orjson wrote a NaN or an infinity as null
        return _standard(obj, default)
    return raw.decode()


def _standard(obj: Any, default: Callable[[Any], Any] | None) -> str:
    return json.dumps(obj, default=default, ensure_ascii=False, separators=(",", ":"))


def _has_non_finite(obj: Any) -> bool:
    if isinstance(obj, float):
        return not math.isfinite(obj)
    if isinstance(obj, dict):
        return any(_has_non_finite(v) for v in obj.values())
    if isinstance(obj, list | tuple):
        return any(_has_non_finite(v) for v in obj)
    return False
