"""Lazy names: each package declares its exports once (module → names, `_NAMES`), served by
`aeh._util.lazy.lazy_exports`; its imports (eager, or under TYPE_CHECKING for the type checker)
must say the same, and every name must resolve to the object its module holds."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "aeh"


def _declaring() -> list[str]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if "_bundled" not in path.parts and "_lazy_exports(__name__, _NAMES" in path.read_text(encoding="utf-8"):
            parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
            found.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return found


DECLARING = _declaring()


def _imported(tree: ast.Module) -> set[tuple[str, str]]:
    """(module, name) of each `from aeh… import name`, at the top level or under TYPE_CHECKING."""
    found: set[tuple[str, str]] = set()
    for node in tree.body:
        body = node.body if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test) else [node]
        for inner in body:
            if isinstance(inner, ast.ImportFrom) and inner.module and inner.module.startswith("aeh") \
                    and inner.module != "aeh._util.lazy":
                found |= {(inner.module, alias.asname or alias.name) for alias in inner.names}
    return found


def test_every_package_with_lazy_names_declares_them_one_way() -> None:
    assert set(DECLARING) >= {"aeh", "aeh.plugins", "aeh.analysis", "aeh.stats", "aeh.engine", "aeh.report",
                              "aeh.importers", "aeh.suite", "aeh.store", "aeh.grading", "aeh.adapters"}
    offenders = [p for p in PACKAGE.rglob("*.py") if "_bundled" not in p.parts
                 and "_LAZY = " in p.read_text(encoding="utf-8")]
    assert offenders == []


@pytest.mark.parametrize("name", DECLARING)
def test_the_imports_declare_the_same_names_as_the_table(name: str) -> None:
    module = importlib.import_module(name)
    path = Path(module.__file__ or "")
    table = {(home, export) for home, names in module._NAMES.items() for export in names}
    assert _imported(ast.parse(path.read_text(encoding="utf-8"))) == table
    assert sorted(module.__all__) == sorted(n for _, n in table if not n.startswith("_") or n.startswith("__"))
    for home, export in sorted(table):
        assert getattr(module, export) is getattr(importlib.import_module(home), export), f"{name}.{export}"


def test_a_name_outside_the_table_is_an_attribute_error() -> None:
    import aeh.stats

    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        aeh.stats.no_such_name  # noqa: B018
