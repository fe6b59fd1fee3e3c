"""Heavy names loaded on first use: a package's names (PEP 562 `__getattr__`) and whole modules."""

from __future__ import annotations

import importlib
import sys
import warnings
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

__all__ = ["lazy_getattr", "lazy_module", "moved_getattr"]


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


def moved_getattr(module: str, table: Mapping[str, str]) -> Callable[[str], object]:
    """The `__getattr__` of a public module whose names moved: a name in `table` (name → the
    module it lives in now) is imported from there, with a DeprecationWarning naming that module.
    Nothing is cached, so every use warns (Python shows each place once)."""

    def __getattr__(name: str) -> object:
        home = table.get(name)
        if home is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        warnings.warn(f"{module}.{name} is deprecated: import {name} from {home} ({module} keeps it for one more "
                      "release)", DeprecationWarning, stacklevel=2)
        return getattr(importlib.import_module(home), name)

    return __getattr__


class _LazyModule:
    """Stands for a module until an attribute is read, then imports it (once) and delegates."""

    __slots__ = ("_name", "_module")

    def __init__(self, name: str) -> None:
        self._name = name
        self._module: ModuleType | None = None

    def __getattr__(self, attr: str) -> Any:
        module = self._module
        if module is None:
            module = self._module = importlib.import_module(self._name)
        return getattr(module, attr)

    def __repr__(self) -> str:
        return f"<lazy module {self._name!r}{' (loaded)' if self._module is not None else ''}>"


def lazy_module(name: str) -> Any:
    """A stand-in for `import name` that imports on first attribute access, for a heavy library a
    module uses only in some functions. Pair it with `if TYPE_CHECKING: import name` so the type
    checker sees the real module; unlike `importlib.util.LazyLoader` it puts nothing into
    `sys.modules` until the module is really imported."""
    return _LazyModule(name)
