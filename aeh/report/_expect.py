"""The one check every report section makes of what it is given."""

from __future__ import annotations

from typing import Any

__all__ = ["expect"]


def expect(result: Any, kind: type[Any]) -> None:
    """Refuse anything but the result a section reads: a bare DataFrame has none of its fields, and
    a section that guessed them would render blank instead of failing."""
    if not isinstance(result, kind):
        raise TypeError(f"this report section reads a {kind.__name__} (what aeh returns), got "
                        f"{type(result).__name__}")
