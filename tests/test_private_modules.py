"""The naming rule: a package's `_modules` are its own; other packages import from the package."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "aeh"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _home(path: Path) -> str:
    """The package a file belongs to (its own package for an `__init__`)."""
    name = _module_name(path)
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def _private_reaches(path: Path) -> list[str]:
    home = _home(path)
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        modules = ([node.module] if isinstance(node, ast.ImportFrom) and node.module and node.level == 0
                   else [a.name for a in node.names] if isinstance(node, ast.Import) else [])
        for module in modules:
            parent, _, last = module.rpartition(".")
            if module.startswith("aeh.") and last.startswith("_") and parent not in (home, "aeh") \
                    and not home.startswith(parent + "."):
                found.append(module)
    return found


def test_no_module_imports_another_packages_private_module() -> None:
    files = [p for p in PACKAGE.rglob("*.py") if "_bundled" not in p.parts]
    offenders = {_module_name(p): bad for p in files if (bad := _private_reaches(p))}
    assert offenders == {}


def test_the_root_of_the_package_reads_like_a_table_of_contents() -> None:
    """At most 8 modules at the root; the rest live in the packages they serve."""
    assert sorted(p.name for p in PACKAGE.glob("*.py")) == [
        "__init__.py", "_version.py", "api.py", "cli.py", "errors.py", "models.py", "plugins.py"]


@pytest.mark.parametrize("name", ["aeh.trace", "aeh.trajectory", "aeh.recording", "aeh.llm", "aeh.logs", "aeh.dryrun",
                                  "aeh.api", "aeh.plugins", "aeh.models", "aeh.errors"])
def test_public_modules_keep_their_import_path(name: str) -> None:
    assert importlib.import_module(name).__name__ == name
