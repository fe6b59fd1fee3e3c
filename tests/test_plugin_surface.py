"""The plugin surface: `aeh.plugins` is light, and shipped plugins need nothing else from aeh."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: What a suite, example or plugin may import from aeh: the public API, the plugin surface, and
#: the optional integrations (their own extras keep them out of `aeh.plugins`).
ALLOWED = ("aeh", "aeh.plugins")


def test_importing_the_plugin_surface_loads_no_dataframe_library() -> None:
    code = "import sys, aeh.plugins; print(sorted(m for m in ('pandas', 'polars', 'pyarrow') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def _aeh_imports(path: Path) -> list[str]:
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append(node.module)
        elif isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
    return [m for m in found if m == "aeh" or m.startswith("aeh.")]


def _outside_the_surface(path: Path) -> list[str]:
    return [m for m in _aeh_imports(path) if m not in ALLOWED and not m.startswith("aeh.integrations.")]


def test_shipped_suites_examples_and_test_plugins_import_only_the_plugin_surface() -> None:
    files = [p for folder in ("suites", "examples", "tests/demo_plugin") for p in (ROOT / folder).rglob("*.py")
             if "build" not in p.relative_to(ROOT).parts]
    offenders = {str(p.relative_to(ROOT)): bad for p in files if (bad := _outside_the_surface(p))}
    assert offenders == {}


def test_importing_the_plugin_surface_loads_only_its_table() -> None:
    """Every name is lazy: `import aeh.plugins` loads neither pydantic nor any aeh package."""
    code = ("import sys, aeh.plugins; print(sorted(m for m in sys.modules if m.split('.')[0] in ('aeh', 'pydantic')"
            " and m not in ('aeh', 'aeh.plugins', 'aeh._util', 'aeh._util.lazy', 'aeh.errors', 'aeh._util.install')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_registries_are_reached_through_functions_and_the_old_names_warn() -> None:
    import aeh.plugins
    from aeh.adapters import adapters

    assert not any(name in aeh.plugins.__all__ for name in aeh.plugins._MOVED)
    listed = aeh.plugins.installed("adapters")
    assert set(listed) == {"adapters"} and listed["adapters"]["mock"] == "builtin"
    listed["adapters"]["mock"] = "changed"
    assert aeh.plugins.installed("adapters")["adapters"]["mock"] == "builtin"
    with pytest.raises(ValueError, match="unknown plugin kind 'adapter'"):
        aeh.plugins.installed("adapter")
    with pytest.warns(DeprecationWarning, match=r"aeh\.plugins\.adapters is deprecated: import adapters from aeh\.adapters"):
        assert aeh.plugins.adapters is adapters
