"""Trajectory dimension scorers (step efficiency, loop detection, tool selection …): the slot.

No scorer ships yet. The registry exists so that scorers, built-in or from the `aeh.scorers`
entry-point group, arrive through the same path as every other extension point.
"""

from __future__ import annotations

from typing import Any

from aeh._registry import Registry

__all__ = ["default_scorers"]

#: Name → scorer. The scorer contract is defined with the first built-in scorer.
default_scorers: Registry[Any] = Registry("trajectory scorer", group="aeh.scorers")
