"""Import a script of `examples/` as a module, the way the README runs it (no sys.path changes)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def load_example(name: str) -> ModuleType:
    """`examples/<name>.py`, imported once per test session."""
    key = f"aeh_example_{name}"
    if key not in sys.modules:
        spec = importlib.util.spec_from_file_location(key, EXAMPLES / f"{name}.py")
        assert spec is not None and spec.loader is not None, f"no example {name!r} in {EXAMPLES}"
        module = importlib.util.module_from_spec(spec)
        sys.modules[key] = module  # before exec: dataclasses and pickling look the module up
        spec.loader.exec_module(module)
    return sys.modules[key]
