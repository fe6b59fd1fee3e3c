"""The public API is what `aeh.__all__` says, derived from the module rather than a copied list.

As httpx's tests/test_exported_members.py does: every public name bound in `aeh` is exported,
and every exported name is either bound there or served on first use by the module's
`__getattr__` (PEP 562). Written against the public behaviour (`__all__`, `vars`, `dir`,
`getattr`) only, so modules can move inside the package without touching this test.
"""

from __future__ import annotations
import __future__

import dataclasses
import subprocess
import sys
import types

import aeh

# Dunder names that are deliberately part of the public API.
PUBLIC_DUNDERS = {"__version__"}


def _public_bound_names() -> set[str]:
    """Public names bound in the module namespace, leaving out submodules and `__future__` flags."""
    return {
        name
        for name, value in vars(aeh).items()
        if (not name.startswith("_") or name in PUBLIC_DUNDERS)
        and not isinstance(value, (types.ModuleType, __future__._Feature))
    }


def _lazy_names() -> set[str]:
    return set(aeh.__all__) - _public_bound_names()


def test_all_has_no_duplicates_and_is_sorted() -> None:
    assert len(aeh.__all__) == len(set(aeh.__all__))
    assert aeh.__all__ == sorted(aeh.__all__)


def test_every_public_name_in_the_module_is_exported() -> None:
    leaked = _public_bound_names() - set(aeh.__all__)
    assert not leaked, f"public names bound in aeh but missing from __all__ (export them or make them private): {sorted(leaked)}"


def test_every_exported_name_not_bound_is_served_lazily() -> None:
    lazy = _lazy_names()
    if lazy:
        getter = vars(aeh).get("__getattr__")
        assert callable(getter), f"{sorted(lazy)} are in __all__ but neither bound in aeh nor served by aeh.__getattr__"
        for name in lazy:
            assert getter(name) is getattr(aeh, name), name


def test_exported_names_resolve() -> None:
    for name in aeh.__all__:
        assert getattr(aeh, name) is not None, name


def test_unknown_names_raise_attribute_error() -> None:
    assert not hasattr(aeh, "no_such_public_name")


def test_dir_lists_the_exported_names() -> None:
    # dir() shows bound names; a module-level __dir__ (PEP 562) must also list the lazy ones.
    public_dir = {n for n in dir(aeh) if not n.startswith("_") or n in PUBLIC_DUNDERS}
    assert set(aeh.__all__) - public_dir <= _lazy_names()
    if "__dir__" in vars(aeh):
        assert set(aeh.__all__) <= public_dir
        extra = {n for n in public_dir - set(aeh.__all__)
                 if not isinstance(vars(aeh).get(n), (types.ModuleType, __future__._Feature))}
        assert not extra, f"aeh.__dir__ lists names that are not exported: {sorted(extra)}"


def _own_docstring(obj: object) -> str:
    if isinstance(obj, type):
        doc = obj.__dict__.get("__doc__") or ""  # a class's own, not one inherited
        if dataclasses.is_dataclass(obj) and doc.startswith(f"{obj.__name__}("):
            return ""  # the signature dataclasses writes when there is no docstring
        return doc.strip()
    return (getattr(obj, "__doc__", None) or "").strip()


def test_every_exported_name_has_a_docstring() -> None:
    missing = []
    for name in aeh.__all__:
        obj = getattr(aeh, name)
        if isinstance(obj, (str, int, float, tuple)):
            continue  # constants such as __version__ carry no docstring of their own
        if not _own_docstring(obj):
            missing.append(name)
    assert not missing, f"exported without a docstring: {missing}"


def test_version_is_a_version_string() -> None:
    assert isinstance(aeh.__version__, str)
    assert aeh.__version__[:1].isdigit()


def test_import_aeh_stays_light() -> None:
    code = "import sys, aeh; heavy = [m for m in ('papermill', 'nbconvert', 'ipywidgets', 'openai', 'seaborn') if m in sys.modules]; print(heavy)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]", f"`import aeh` pulled in {out.strip()}"
