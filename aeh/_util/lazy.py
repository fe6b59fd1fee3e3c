"""Heavy names loaded on first use: a package's names (PEP 562 `__getattr__`) and whole modules."""

from __future__ import annotations

import importlib
import sys
import warnings
from collections.abc import Callable, Iterable, Mapping
from types import ModuleType
from typing import Any

__all__ = ["by_module", "lazy_exports", "lazy_getattr", "lazy_module", "moved_getattr"]


def by_module(declared: Mapping[str, Iterable[str]]) -> dict[str, str]:
    """The name → module table of a declaration written module → names (each name once)."""
    table: dict[str, str] = {}
    for module, names in declared.items():
        for name in names:
            if name in table:
                raise ValueError(f"{name!r} is declared in both {table[name]} and {module}")
            table[name] = module
    return table


def lazy_getattr(package: str, table: Mapping[str, str], *, cache: bool = False,
                 moved: Mapping[str, str] | None = None) -> Callable[[str], object]:
    """The `__getattr__` of `package`: a name in `table` (name → module) is imported from its
    module when first asked for; with `cache`, it is then bound in the package, so later lookups
    skip this function. A name in `moved` (name → its home now) still resolves, with the
    DeprecationWarning `moved_getattr` gives."""
    namespace = sys.modules[package].__dict__
    moved = moved or {}

    def __getattr__(name: str) -> object:
        module = table.get(name)
        if module is None:
            return _moved(package, name, moved, stacklevel=3)
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
        return _moved(module, name, table, stacklevel=3)

    return __getattr__


def _moved(module: str, name: str, table: Mapping[str, str], *, stacklevel: int) -> object:
    home = table.get(name)
    if home is None:
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    warnings.warn(f"{module}.{name} is deprecated: import {name} from {home} ({module} keeps it for one more "
                  "release)", DeprecationWarning, stacklevel=stacklevel)
    return getattr(importlib.import_module(home), name)


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


def lazy_exports(package: str, declared: Mapping[str, Iterable[str]], *, cache: bool = False,
                 moved: Mapping[str, str] | None = None) -> tuple[Callable[[str], object], list[str]]:
    """The `__getattr__` and `__all__` of a package that declares its exports once, module → names.

    A name the package has not bound (imported) yet is imported from its module on first use
    (`lazy_getattr`); names it imports eagerly are declared too, so the declaration is the whole
    export list. `__all__` is every declared name but the private ones (`_x`), sorted."""
    table = by_module(declared)
    public = sorted(name for name in table if not (name.startswith("_") and not name.startswith("__")))
    return lazy_getattr(package, table, cache=cache, moved=moved), public
