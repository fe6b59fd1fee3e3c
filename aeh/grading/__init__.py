"""Grading: tier-0 outcome graders, tier-1 invariants and failure classification.

Importing this package registers the built-in grader kinds (`aeh.grading.outcome`,
`workspace_graders`, `judge_grader`) on `default_graders`; plugins add theirs through the
`aeh.graders` entry-point group.
"""

from aeh.grading._registry import GradeContext, GraderConfig, GraderRegistry, default_graders, grader  # noqa: I001
from aeh.grading import _hidden_tests, judge_grader, outcome, workspace_graders  # noqa: F401  (register the built-in kinds)
from aeh.grading.classify import classify_failure, unrecovered_tool_errors
from aeh.grading.invariants import (
    SHIPPED_INVARIANTS,
    check_invariants,
    default_invariants,
    invariant,
    registered_invariants,
)
from aeh.grading.outcome import extract_last_number
from aeh.grading.scorers import default_scorers

__all__ = [
    "SHIPPED_INVARIANTS",
    "GradeContext",
    "GraderConfig",
    "GraderRegistry",
    "check_invariants",
    "classify_failure",
    "default_graders",
    "default_invariants",
    "default_scorers",
    "extract_last_number",
    "grader",
    "invariant",
    "registered_invariants",
    "unrecovered_tool_errors",
]
