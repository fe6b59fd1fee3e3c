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

__all__ = ["dumps", "dumps_bytes", "finite_plain_bytes"]

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


def dumps_bytes(obj: Any, default: Callable[[Any], Any] | None = None) -> bytes:
    """`dumps(obj, default)` as UTF-8 bytes, without decoding orjson's output only to encode it
    again (the store compresses long values from their bytes)."""
    try:
        raw = orjson.dumps(obj, default=default, option=_OPTIONS)
    except (orjson.JSONEncodeError, TypeError):
        return _standard(obj, default).encode()
    if b"null" in raw and _has_non_finite(obj):
        return _standard(obj, default).encode()
    return raw


def finite_plain_bytes(obj: Any) -> bytes:
    """`dumps_bytes(obj)` for a value known to hold only plain JSON types and no NaN or infinity
    (`Redactor._clean`): no search for a non-finite float."""
    try:
        return orjson.dumps(obj, option=_OPTIONS)
    except (orjson.JSONEncodeError, TypeError):  # an int beyond 64 bits
        return _standard(obj, None).encode()


def _standard(obj: Any, default: Callable[[Any], Any] | None) -> str:
    return json.dumps(obj, default=default, ensure_ascii=False, separators=(",", ":"))


def _has_non_finite(obj: Any) -> bool:
    """True when a float in `obj` (at any depth) is NaN or infinite.

    Run on every payload whose JSON holds a `null` (most tool spans: `"error":null`), so it walks
    without recursion and tests the exact types first; subclasses as `isinstance` sees them.
    """
    stack = [obj]
    pop, push, extend = stack.pop, stack.append, stack.extend
    while stack:
        value = pop()
        kind = type(value)
        if kind is str or kind is int or kind is bool or value is None:
            continue
        if kind is dict:
            extend(value.values())
        elif kind is list or kind is tuple:
            extend(value)
        elif isinstance(value, float):
            if not math.isfinite(value):
                return True
        elif isinstance(value, dict):
            push(list(value.values()))
        elif isinstance(value, list | tuple):
            push(list(value))
    return False
