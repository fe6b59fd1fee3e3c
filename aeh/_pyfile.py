"""Import a Python file by its path (a suite's suite.py, an agent named as file.py:function)."""

from __future__ import annotations

import hashlib
import importlib.util
import sys
import types
from pathlib import Path

__all__ = ["NotAPythonFile", "import_file"]


class NotAPythonFile(ImportError):
    """The path cannot be loaded as Python source at all (no import machinery for it)."""


def import_file(path: Path, prefix: str) -> types.ModuleType:
    """Execute `path` as a module registered in sys.modules under a name unique to the path.

    Registered before it runs, because dataclasses and pydantic look their module up while the
    file executes; removed again if it fails, so a fixed file imports afresh.
    """
    digest = hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:10]
    name = f"{prefix}_{path.parent.name}_{digest}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise NotAPythonFile(f"{path} is not a Python file", path=str(path))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module
