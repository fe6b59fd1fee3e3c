"""Suites: the plugin contract, the loader (directories and `aeh.suites` entry points).

Names load lazily, so that grading modules can use the contract without importing the loader.
"""

from importlib import import_module
from typing import Any

_EXPORTS = {
    "EvalSuite": "aeh.suite.contract",
    "Invariant": "aeh.suite.contract",
    "InvariantVerdict": "aeh.suite.contract",
    "DirectorySuite": "aeh.suite.loader",
    "load_suite": "aeh.suite.loader",
    "suite_hash": "aeh.suite.loader",
    "validate_suite": "aeh.suite.loader",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'aeh.suite' has no attribute {name!r}")
