"""Names a package serves from its heavy modules only on first use (PEP 562 `__getattr__`)."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping

__all__ = ["lazy_getattr"]


def lazy_getattr(package: str, table: Mapping[str, str], *, cache: bool = False) -> Callable[[str], object]:
    """The `__getattr__` of `package`: a name in `table` (name → module) is imported from its
    module when first asked for; with `cache`, it is then bound in the package, so later lookups
    skip this function."""
    namespace = sys.modules[package].__dict__

    def __getattr__(name: str) -> object:
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        if cache:
            namespace[name] = value
        return value

    return __getattr__
