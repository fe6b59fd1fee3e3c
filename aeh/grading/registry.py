"""Deprecated: the grader registry moved to `aeh.grading` (`from aeh.grading import grader`).

Graders written against this module keep loading; each name read from here warns
(DeprecationWarning) and names its new home. Kept for one more release.
"""

from aeh._util.lazy import moved_getattr

__getattr__ = moved_getattr(__name__, {
    **dict.fromkeys(["GradeContext", "GraderConfig", "GraderRegistry", "default_graders", "grader"], "aeh.grading"),
    "result_name": "aeh.grading._registry",
})
