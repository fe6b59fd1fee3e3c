"""The import layers: the contract in pyproject.toml holds, and no module imports the root package."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_no_module_inside_aeh_imports_the_aeh_package_itself() -> None:
    graph = grimp.build_graph("aeh")
    importers = sorted(m for m in graph.find_modules_that_directly_import("aeh") if m != "aeh")
    assert importers == [], f"{importers} import `aeh` (the public face); import the module that defines the name"


def test_the_layer_contract_holds() -> None:
    lint = Path(sys.executable).with_name("lint-imports")
    if not lint.exists() and shutil.which("lint-imports") is None:
        pytest.skip("import-linter is not installed (it is in the dev extra)")
    done = subprocess.run([str(lint) if lint.exists() else "lint-imports"], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:]
