"""Grading: tier-0 outcome graders, tier-1 invariants and failure classification.

The built-in grader kinds are listed in `BUILTIN_GRADERS` and imported on first use; plugins add
theirs through the `aeh.graders` entry-point group.
"""

import typing as _typing

from aeh._util.lazy import lazy_getattr as _lazy_getattr
from aeh.grading._registry import BUILTIN_GRADERS, GradeContext, GraderConfig, GraderRegistry, default_graders, grader
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

if _typing.TYPE_CHECKING:
    from aeh.grading._hidden_tests import (
        HIDDEN_PATTERNS,
        build_grading_dir,
        hidden_like_files,
        hidden_sha256,
        run_tests,
        tree_digests,
    )
    from aeh.grading._jail import (
        CONFINED,
        Jail,
        jail_for,
        no_jail_message,
        no_jail_reason,
        probe_jail,
        repository_dirs,
        unconfined_lines,
    )
    from aeh.grading._preflight import preflight_problems, require_confinement, require_preflight
    from aeh.grading._profiles import DEFAULT_PROFILE, SCORING_HELP, ScoringProfile, scoring_profile, scoring_profiles
    from aeh.grading._sandbox import Sandbox, probe_sandbox, sandbox_for

# loaded on first use: what other packages take from here, kept off this package's import
_LAZY = {
    "HIDDEN_PATTERNS": "aeh.grading._hidden_tests",
    "build_grading_dir": "aeh.grading._hidden_tests",
    "hidden_like_files": "aeh.grading._hidden_tests",
    "hidden_sha256": "aeh.grading._hidden_tests",
    "run_tests": "aeh.grading._hidden_tests",
    "tree_digests": "aeh.grading._hidden_tests",
    "CONFINED": "aeh.grading._jail",
    "Jail": "aeh.grading._jail",
    "no_jail_message": "aeh.grading._jail",
    "no_jail_reason": "aeh.grading._jail",
    "probe_jail": "aeh.grading._jail",
    "unconfined_lines": "aeh.grading._jail",
    "jail_for": "aeh.grading._jail",
    "repository_dirs": "aeh.grading._jail",
    "preflight_problems": "aeh.grading._preflight",
    "require_confinement": "aeh.grading._preflight",
    "require_preflight": "aeh.grading._preflight",
    "DEFAULT_PROFILE": "aeh.grading._profiles",
    "SCORING_HELP": "aeh.grading._profiles",
    "ScoringProfile": "aeh.grading._profiles",
    "scoring_profile": "aeh.grading._profiles",
    "scoring_profiles": "aeh.grading._profiles",
    "Sandbox": "aeh.grading._sandbox",
    "probe_sandbox": "aeh.grading._sandbox",
    "sandbox_for": "aeh.grading._sandbox",
}


__getattr__ = _lazy_getattr(__name__, _LAZY)


__all__ = [
    "Sandbox",
    "BUILTIN_GRADERS",
    "DEFAULT_PROFILE",
    "SCORING_HELP",
    "ScoringProfile",
    "scoring_profile",
    "scoring_profiles",
    "HIDDEN_PATTERNS",
    "SHIPPED_INVARIANTS",
    "GradeContext",
    "GraderConfig",
    "GraderRegistry",
    "CONFINED",
    "Jail",
    "build_grading_dir",
    "check_invariants",
    "classify_failure",
    "default_graders",
    "default_invariants",
    "default_scorers",
    "extract_last_number",
    "grader",
    "hidden_like_files",
    "hidden_sha256",
    "invariant",
    "jail_for",
    "no_jail_message",
    "no_jail_reason",
    "preflight_problems",
    "probe_jail",
    "probe_sandbox",
    "registered_invariants",
    "repository_dirs",
    "require_confinement",
    "require_preflight",
    "run_tests",
    "sandbox_for",
    "tree_digests",
    "unconfined_lines",
    "unrecovered_tool_errors",
]
