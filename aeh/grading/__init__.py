"""Grading: tier-0 outcome graders, tier-1 invariants and failure classification.

Names load lazily: grading and suite modules refer to each other, and eager re-exports here
would make import order matter.
"""

from importlib import import_module
from typing import Any

_EXPORTS = {
    "classify_failure": "aeh.grading.classify",
    "unrecovered_tool_errors": "aeh.grading.classify",
    "SHIPPED_INVARIANTS": "aeh.grading.invariants",
    "check_invariants": "aeh.grading.invariants",
    "extract_last_number": "aeh.grading.outcome",
    "GradeContext": "aeh.grading.registry",
    "GraderConfig": "aeh.grading.registry",
    "GraderRegistry": "aeh.grading.registry",
    "default_graders": "aeh.grading.registry",
    "grader": "aeh.grading.registry",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'aeh.grading' has no attribute {name!r}")
