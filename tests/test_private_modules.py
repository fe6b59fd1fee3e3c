"""The naming rule: a package's `_modules` are its own; other packages import from the package."""

from __future__ import annotations

import ast
from pathlib import Path

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
